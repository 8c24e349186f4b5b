import { execFileSync } from 'node:child_process'
import { describe } from 'vitest'
import { ensureTestImage } from '../support/container-image'
import { limitsContract } from '../support/limits-contract'

// The same limit attacks on the container executor: podman always, Docker where a daemon answers.
const podman: Record<string, string> = { TOOLPORT_SANDBOX: 'container', TOOLPORT_CONTAINER_ENGINE: 'podman' }
describe('limits on podman', () => {
  limitsContract(
    () => podman,
    async () => {
      podman.TOOLPORT_CONTAINER_IMAGE = await ensureTestImage('podman')
    },
  )
})

function dockerAnswers(): boolean {
  try {
    execFileSync('docker', ['info', '--format', '{{.ServerVersion}}'], { stdio: 'ignore', timeout: 20_000 })
    return true
  } catch {
    console.warn('limits-container.test.ts: no Docker daemon answers `docker info`; the docker half is skipped')
    return false
  }
}

const docker: Record<string, string> = { TOOLPORT_SANDBOX: 'container', TOOLPORT_CONTAINER_ENGINE: 'docker' }
describe.runIf(dockerAnswers())('limits on docker', () => {
  limitsContract(
    () => docker,
    async () => {
      docker.TOOLPORT_CONTAINER_IMAGE = await ensureTestImage('docker')
    },
  )
})
