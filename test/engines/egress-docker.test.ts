import { execFileSync } from 'node:child_process'
import { describe } from 'vitest'
import { ensureTestImage } from '../support/container-image'
import { egressContract } from '../support/egress-contract'
import { egressHarness } from '../support/egress-harness'
import { egressLimitsContract } from '../support/egress-limits-contract'

// The egress suite on Docker's engine, where a daemon answers (.ci/run starts one); see shell-docker.test.ts.
function dockerAnswers(): boolean {
  try {
    execFileSync('docker', ['info', '--format', '{{.ServerVersion}}'], { stdio: 'ignore', timeout: 20_000 })
    return true
  } catch {
    console.warn('egress-docker.test.ts: no Docker daemon answers `docker info`; skipped')
    return false
  }
}

describe.runIf(dockerAnswers())('egress on docker', () => {
  const env: Record<string, string> = { TOOLPORT_SANDBOX: 'container', TOOLPORT_CONTAINER_ENGINE: 'docker' }
  const harness = egressHarness(
    () => env,
    async () => {
      env.TOOLPORT_CONTAINER_IMAGE = await ensureTestImage('docker')
    },
  )
  egressContract(harness)
  egressLimitsContract(harness)
})
