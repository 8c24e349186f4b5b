import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createFsStorage } from '../../src/storage/fs'
import type { ObjectStore } from '../../src/storage/store'
import { startTestServer, type TestServer } from './server'

/**
 * The workspace limits attacked from inside, through execute_command over HTTP: bytes and entries
 * hidden in folders nested past PATH_MAX, bursts made between two samples of the watchdog, and a
 * folder chain no full path can reach, which must neither break the call nor the workspace after it
 * (also after a restart on the same work folder).
 */
export function limitsContract(executorEnv: () => Record<string, string>, prepare?: () => Promise<void>): void {
  const limits = {
    TOOLPORT_SHELL_WORKSPACE_BYTES: String(20 * 1024 * 1024),
    TOOLPORT_SHELL_WORKSPACE_ENTRIES: '2000',
    TOOLPORT_SHELL_FILE_BYTES: String(30 * 1024 * 1024),
  }
  // 30 folders of 200-character names, 6,030 characters below /workspace: past PATH_MAX (4,096). Made with
  // relative chdir (a shell's cd tracks the full path and stops at PATH_MAX), then `then` runs down there.
  const deep = (then = 'pass') =>
    `python3 -c "import os\nfor i in range(30): os.mkdir('d' * 200); os.chdir('d' * 200)\n${then}"`
  const deepChain = deep()
  let folder: string
  let storage: ObjectStore
  let server: TestServer
  const env = () => ({ ...executorEnv(), ...limits, TOOLPORT_WORK_DIR: join(folder, 'work') })
  const run = (target: TestServer, command: string, workspace: string) =>
    target.call('execute_command', { command, timeout_seconds: 60 }, { workspace })
  const stored = async (workspace: string) =>
    (await storage.list(`tenants/default/workspaces/${workspace}/`)).objects.map((object) => object.key)

  beforeAll(async () => {
    await prepare?.()
    folder = await mkdtemp(join(tmpdir(), 'toolport-limits-'))
    // The sandbox user must reach the work folder inside it.
    await chmod(folder, 0o711)
    storage = await createFsStorage({ root: join(folder, 'data') })
    server = await startTestServer(env(), { shell: true, storage })
  })
  afterAll(async () => {
    await server?.stop()
    if (folder) await rm(folder, { recursive: true, force: true })
  })

  describe('workspace limits, however the workspace is shaped', () => {
    it('counts the bytes of folders nested past PATH_MAX', async () => {
      const write = "for name in 'abc': open(name, 'wb').write(bytes(9000000))"
      const command = `${deep(write)}; sleep 5; echo finished`
      const result = await run(server, command, 'deep-bytes')
      expect(result.status, JSON.stringify(result.body).slice(0, 500)).toBe(200)
      expect(result.body.limit_exceeded).toBe('workspace size')
      expect(result.body.stdout).not.toContain('finished')
      expect((await run(server, 'echo next', 'deep-bytes')).body.stdout).toBe('next\n')
    })

    it('counts the entries of folders nested past PATH_MAX', async () => {
      const command = `${deep("for i in range(3000): open(str(i), 'w').close()")}; sleep 5; echo finished`
      const result = await run(server, command, 'deep-entries')
      expect(result.status, JSON.stringify(result.body).slice(0, 500)).toBe(200)
      expect(result.body.limit_exceeded).toBe('workspace file count')
      expect(result.body.stdout).not.toContain('finished')
    })

    it('syncs nothing of a burst past the entry limit made between two samples', async () => {
      await server.call('write_file', { path: 'before.txt', content: 'kept\n' }, { workspace: 'burst' })
      const result = await run(server, 'mkdir many && cd many && seq 5000 | xargs touch', 'burst')
      expect(result.status, JSON.stringify(result.body).slice(0, 500)).toBe(200)
      expect(result.body.limit_exceeded).toBe('workspace file count')
      expect(result.body.files_changed).toEqual([])
      expect(result.body.hint).toMatch(/nothing was saved/i)
      expect(await stored('burst')).toEqual(['tenants/default/workspaces/burst/before.txt'])
      const next = await run(server, 'ls; ls many 2>&1 | head -1', 'burst')
      expect(next.body.stdout).toMatch(/^before\.txt\n.*No such file/s)
    })

    it('syncs nothing of a burst past the size limit made between two samples', async () => {
      const result = await run(server, 'for f in a b c; do head -c 9000000 /dev/zero > $f.bin; done', 'burst-bytes')
      expect(result.status).toBe(200)
      expect(result.body.limit_exceeded).toBe('workspace size')
      expect(await stored('burst-bytes')).toEqual([])
    })

    it('keeps a workspace usable after a folder chain past PATH_MAX, also after a restart', async () => {
      const made = await run(server, `echo kept > kept.txt; ${deep("open('file', 'w').write('deep')")}`, 'chain')
      expect(made.status, JSON.stringify(made.body).slice(0, 500)).toBe(200)
      expect(made.body.files_changed).toEqual([{ path: 'kept.txt', change: 'added', size: 5 }])
      expect(made.body.skipped_files?.[0]?.reason).toMatch(/not allowed|too long/)
      const again = await run(server, 'cat kept.txt; ls | wc -l', 'chain')
      expect(again.status).toBe(200)
      expect(again.body.stdout).toBe('kept\n1\n')

      // The chain made again, then the service restarted on the same work folder and storage.
      expect((await run(server, deepChain, 'chain')).status).toBe(200)
      await server.stop()
      server = await startTestServer(env(), { shell: true, storage })
      const restarted = await run(server, 'ls; cat kept.txt', 'chain')
      expect(restarted.status, JSON.stringify(restarted.body).slice(0, 500)).toBe(200)
      expect(restarted.body.stdout).toBe('kept.txt\nkept\n')
    })
  })
}
