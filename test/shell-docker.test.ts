import { execFile, execFileSync } from 'node:child_process'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { ensureTestImage } from './support/container-image'
import { shellContract } from './support/shell-contract'

const exec = promisify(execFile)

// The container executor on Docker's engine: .ci/run installs docker.io and starts dockerd (without
// iptables or a bridge). Where no daemon answers, the suite says so and is skipped; podman's suite
// (shell-container.test.ts) is the one every machine runs.
function dockerAnswers(): boolean {
  try {
    execFileSync('docker', ['info', '--format', '{{.ServerVersion}}'], { stdio: 'ignore', timeout: 20_000 })
    return true
  } catch {
    console.warn('shell-docker.test.ts: no Docker daemon answers `docker info`; skipped')
    return false
  }
}

const env: Record<string, string> = { TOOLPORT_SANDBOX: 'container', TOOLPORT_CONTAINER_ENGINE: 'docker' }

describe.runIf(dockerAnswers())('container executor on docker', () => {
  shellContract({
    env,
    // As root the container runs as TOOLPORT_SANDBOX_UID (nobody by default), the workspace copy's owner.
    sandboxUid: process.getuid?.() === 0 ? 65534 : (process.getuid?.() ?? 0),
    // Docker names the container's host (HOSTNAME); busybox sh counts SHLVL.
    extraEnvNames: ['HOSTNAME', 'SHLVL'],
    // Docker's CLI keeps no trace of an OOM kill once --rm removed the container, nor of a refused fork.
    reports: { memory: false, processes: false },
    prepare: async () => {
      env.TOOLPORT_CONTAINER_IMAGE = await ensureTestImage('docker')
    },
  })

  it('leaves no toolport container behind', async () => {
    const { stdout } = await exec('docker', [
      'ps',
      '--all',
      '--filter',
      'label=io.toolport.run',
      '--format',
      '{{.Names}}',
    ])
    expect(stdout.trim()).toBe('')
  })
})
