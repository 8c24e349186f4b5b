import { mkdtemp, readdir, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { silentLogger } from '../../src/core/logger'
import { loadSettings } from '../../src/core/settings'
import { sandboxSettings } from '../../src/sandbox/settings'
import { setupShell } from '../../src/sandbox/setup'
import { startTestServer } from '../support/server'
import { shellContract } from '../support/shell-contract'

// Real bubblewrap, real cgroups where the machine has them.
shellContract({ env: { TOOLPORT_SANDBOX: 'bwrap' }, sandboxUid: 1000 })

describe('image choice', () => {
  it('refuses an image where commands do not run in containers', async () => {
    const server = await startTestServer({ TOOLPORT_SANDBOX: 'bwrap' }, { shell: true })
    try {
      const result = await server.call('execute_command', { command: 'true', image: 'python:3.12' })
      expect(result.status).toBe(400)
      expect(result.body).toMatchObject({ code: 'validation', field: 'image' })
      expect(result.body.hint).toMatch(/Omit image/)
    } finally {
      await server.stop()
    }
  })
})

describe('the workspace copy on the host', () => {
  it('keeps no setuid or setgid file a command made, while the file itself is kept', async () => {
    const server = await startTestServer({ TOOLPORT_SANDBOX: 'bwrap' }, { shell: true })
    try {
      const made = await server.call('execute_command', {
        command: 'cp /bin/sh suid && chmod 4755 suid && cp /bin/sh sgid && chmod 2755 sgid && echo ok',
      })
      expect(made.status, JSON.stringify(made.body)).toBe(200)
      expect(made.body.stdout).toBe('ok\n')
      const copies = await findFiles(join(server.dataDir, 'work'), ['suid', 'sgid'])
      expect(copies.length).toBeGreaterThanOrEqual(2)
      for (const copy of copies) expect((await stat(copy)).mode & 0o6000, copy).toBe(0)
      expect((await server.call('list_files', {})).body.entries.map((entry: { path: string }) => entry.path)).toEqual(
        expect.arrayContaining(['suid', 'sgid']),
      )
    } finally {
      await server.stop()
    }
  })
})

/** Every file below `root` named one of `names`, without following links. */
async function findFiles(root: string, names: string[]): Promise<string[]> {
  const found: string[] = []
  for (const entry of await readdir(root, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && names.includes(entry.name)) found.push(join(entry.parentPath, entry.name))
  }
  return found
}

describe('without a sandbox', () => {
  it('answers 503 unavailable with a hint instead of running unsandboxed', async () => {
    const bare = await startTestServer({ TOOLPORT_SANDBOX: 'none' })
    try {
      const result = await bare.call('execute_command', { command: 'echo hi' })
      expect(result.status).toBe(503)
      expect(result.body.code).toBe('unavailable')
      expect(result.body.hint).toMatch(/bubblewrap|file tools/)
    } finally {
      await bare.stop()
    }
  })
})

describe('setupShell with bubblewrap', () => {
  // As root the sandbox drops to an unprivileged uid, which mkdtemp's 0700 folder shuts out.
  it.skipIf(process.getuid?.() !== 0)('explains a work folder the sandbox user cannot reach', async () => {
    const work = await mkdtemp(join(tmpdir(), 'toolport-setup-'))
    try {
      const settings = loadSettings(
        sandboxSettings,
        { TOOLPORT_SANDBOX: 'bwrap', TOOLPORT_WORK_DIR: join(work, 'bwrap') },
        'node',
      )
      const setup = await setupShell(settings, process.env, silentLogger, { maxFileBytes: 1024 * 1024 })
      expect(setup.shell).toBeUndefined()
      expect(setup.problem).toMatch(/bubblewrap cannot start a sandbox here: .*Permission denied/)
    } finally {
      await rm(work, { recursive: true, force: true })
    }
  })
})
