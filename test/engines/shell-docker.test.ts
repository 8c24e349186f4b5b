import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { leftoverContainers } from '../support/container-image'
import { containerContract } from '../support/shell-contract'

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

describe.runIf(dockerAnswers())('container executor on docker', () => {
  // Docker's CLI keeps no trace of an OOM kill once --rm removed the container, nor of a refused fork.
  containerContract('docker', { memory: false, processes: false })

  it('leaves no toolport container behind', async () => {
    expect(await leftoverContainers('docker')).toEqual([])
  })
})
