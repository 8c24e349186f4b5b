import { execFile } from 'node:child_process'
import { chown, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ContainerOptions, createContainerSandbox } from '../../src/sandbox/executors/container'
import type { Sandbox } from '../../src/sandbox/executors/sandbox'
import { ensureTestImage } from './container-image'

const exec = promisify(execFile)

/**
 * Stops landing at every moment of a container's start: before the engine has it, while it is being
 * created, just after it started. Killing the engine's CLI while it creates the container used to leave
 * that container behind (created, or running its command) once the removal had come too early.
 */
export function containerStopContract(engine: 'podman' | 'docker'): void {
  describe(`${engine}: a run stopped while its container starts`, () => {
    let folder: string
    let sandbox: Sandbox
    beforeAll(async () => {
      folder = await mkdtemp(join(tmpdir(), 'toolport-stop-'))
      const root = process.getuid?.() === 0
      const user = root ? { uid: 65534, gid: 65534 } : { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 }
      if (root) await chown(folder, user.uid, user.gid)
      const image = await ensureTestImage(engine)
      const options: ContainerOptions = {
        engine,
        enginePath: engine,
        image,
        images: [image],
        cpus: 1,
        network: 'none',
        limits: {
          memoryBytes: 128 * 1024 * 1024,
          pids: 64,
          fileBytes: 1024 * 1024,
          openFiles: 256,
          maxOutputBytes: 65_536,
          workspaceBytes: 1024 * 1024,
          workspaceEntries: 100,
        },
        user,
        rootless: !root,
        engineEnv: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root' },
        scratchDir: folder,
        forwarder: undefined,
      }
      sandbox = createContainerSandbox(options)
    })
    afterAll(async () => {
      await rm(folder, { recursive: true, force: true })
    })

    /** Containers of this engine whose command carries the marker. */
    async function containersRunning(marker: string): Promise<string[]> {
      const { stdout } = await exec(engine, [
        'ps',
        '--all',
        '--no-trunc',
        '--filter',
        'label=io.toolport.run',
        '--format',
        '{{.Names}} {{.Status}} {{.Command}}',
      ])
      return stdout.split('\n').filter((line) => line.includes(marker))
    }

    it('answers only once its container is gone, whenever the abort comes', async () => {
      const token = String(100_000 + Math.floor(Math.random() * 900_000))
      for (const delayMs of [0, 5, 10, 15, 20, 30, 40, 50, 60, 80, 100, 130, 170, 250, 400]) {
        const marker = `654.${token}${delayMs}`
        const controller = new AbortController()
        const running = sandbox.run({
          command: `sleep ${marker}`,
          workspaceDir: folder,
          cwd: '',
          timeoutMs: 60_000,
          signal: controller.signal,
        })
        setTimeout(() => controller.abort(), delayMs)
        const result = await running
        expect(result, `abort after ${delayMs} ms`).toMatchObject({ aborted: true, exitCode: null })
        expect(await containersRunning(marker), `abort after ${delayMs} ms`).toEqual([])
      }
    }, 120_000)
  })
}
