import { execFileSync } from 'node:child_process'
import { chmod, chown, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/config'
import { silentLogger } from '../../src/core/logger'
import {
  type BwrapOptions,
  createBwrapSandbox,
  findUsrMergedLinks,
  probeBwrapOverlay,
} from '../../src/sandbox/executors/bwrap'
import { setupShell } from '../../src/sandbox/setup'
import type { ShellService } from '../../src/sandbox/shell-service'
import { markWorkspaceChanged } from '../../src/storage/change-markers'
import { createFsStorage } from '../../src/storage/fs'
import type { ObjectStore } from '../../src/storage/store'
import { toolNames } from '../../src/tools/builtins'

// The overlay sync against the walk of the whole copy: the same commands over the same workspaces, with
// TOOLPORT_SHELL_OVERLAY auto and off, must report the same changes and skips, leave storage the same, and
// leave the next command the same workspace. Each case starts from the same stored files.

const seed: Record<string, string> = {
  'top.txt': 'top\n',
  'a/one.txt': 'one\n',
  'a/two.txt': 'two\n',
  'a/deep/three.txt': 'three\n',
  'a/deep/er/four.txt': 'four\n',
  'b/five.txt': 'five\n',
  'c/six.txt': 'six\n',
}

const cases: Record<string, string> = {
  'nothing written': 'true',
  'a file appended to': 'echo more >> a/one.txt',
  'a new file in a new folder tree': 'mkdir -p n/m/o && echo new > n/m/o/new.txt',
  'a file deleted': 'rm a/two.txt',
  'a folder deleted': 'rm -rf a/deep',
  'a folder removed and made again (opaque)': 'rm -rf a && mkdir -p a/deep && echo again > a/deep/again.txt',
  'a folder made again, one old name written again': 'rm -rf a && mkdir a && echo back > a/one.txt',
  'a folder renamed': 'mv a/deep a/moved',
  'a file replaced by a folder': 'rm top.txt && mkdir top.txt && echo in > top.txt/in.txt',
  'a folder replaced by a file': 'rm -rf b && echo now-a-file > b',
  'metadata only (touch, chmod)': 'touch a/one.txt && chmod 600 c/six.txt',
  'a locked folder': 'chmod 000 a/deep',
  'links and a FIFO': 'ln -s /etc/passwd link && ln -s a loop && mkfifo a/pipe && ln a/one.txt a/hard.txt',
  'a name that is not UTF-8': 'printf x > "$(printf \'bad\\377\')" && echo ok > ok.txt',
  'everything deleted': 'rm -rf ./*',
  'an empty folder made': 'mkdir empty',
  'a setuid file': 'echo s > s.sh && chmod 4755 s.sh',
}

/** What the next command sees of the workspace: every entry with its kind, size, mode and content digest. */
const inventory =
  "find . -mindepth 1 -printf '%y %m %s %P\\n' | sort && find . -type f -exec md5sum {} + | sed 's| \\./| |' | sort"

type Sides = { overlay: ShellService; walk: ShellService }

describe('workspace sync over an overlay, against a walk of the copy', () => {
  let work: string
  let storage: ObjectStore
  let shells: Sides

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'toolport-overlay-test-'))
    await chmod(work, 0o711)
    storage = await createFsStorage({ root: join(work, 'data') })
    const start = async (name: string, overlay: string): Promise<ShellService> => {
      const config = loadConfig(
        {
          TOOLPORT_WORK_DIR: join(work, name),
          TOOLPORT_SHELL_OVERLAY: overlay,
          TOOLPORT_SHELL_WORKSPACE_ENTRIES: '40',
        },
        { toolNames },
      )
      const { shell, problem } = await setupShell(config.sandbox, process.env, silentLogger, {
        maxFileBytes: config.calls.maxFileBytes,
      })
      if (!shell) throw new Error(`no sandbox: ${problem}`)
      return shell
    }
    shells = { overlay: await start('overlay', 'auto'), walk: await start('walk', 'off') }
  })
  afterAll(async () => {
    await rm(work, { recursive: true, force: true })
  })

  const run = (shell: ShellService, prefix: string, command: string, timeoutMs = 20_000) =>
    shell.execute({
      storage,
      tenant: 't',
      workspacePrefix: prefix,
      command,
      cwd: '',
      timeoutMs,
      signal: new AbortController().signal,
    })

  async function stored(prefix: string): Promise<Record<string, string>> {
    const files: Record<string, string> = {}
    const page = await storage.list(prefix)
    for (const object of page.objects) {
      const body = await storage.get(object.key)
      files[object.key.slice(prefix.length)] = body ? Buffer.from(body.body).toString('latin1') : '?'
    }
    return files
  }

  it('runs over an overlay here, and over the copy itself when it is off', () => {
    expect(shells.overlay.status().enforced.workspace_sync).toMatch(/^overlay/)
    expect(shells.walk.status().enforced.workspace_sync).toMatch(/TOOLPORT_SHELL_OVERLAY=off/)
  })

  it('runs over the copy itself while it is empty, and over an overlay once it holds a file', async () => {
    const prefix = 'tenants/t/workspaces/empty-first/'
    // Inside the sandbox, /workspace is an overlay mount only when the run went over one.
    const workspaceMount = 'awk \'$5 == "/workspace" { print $(NF-2) }\' /proc/self/mountinfo'
    const empty = await run(shells.overlay, prefix, `${workspaceMount} && echo first > first.txt`)
    expect(empty.exitCode, empty.output.text).toBe(0)
    expect(empty.stdout.text).not.toContain('overlay')
    expect(empty.filesChanged).toEqual([{ path: 'first.txt', change: 'added', size: 6 }])
    const held = await run(shells.overlay, prefix, `${workspaceMount} && cat first.txt && echo second > second.txt`)
    expect(held.exitCode, held.output.text).toBe(0)
    expect(held.stdout.text).toBe('overlay\nfirst\n')
    expect(held.filesChanged).toEqual([{ path: 'second.txt', change: 'added', size: 7 }])
    expect(await stored(prefix)).toEqual({ 'first.txt': 'first\n', 'second.txt': 'second\n' })
  })

  it.each(Object.entries(cases))('%s: same changes, skips, storage and next view', async (name, command) => {
    const outcome: Record<string, unknown> = {}
    for (const side of ['overlay', 'walk'] as const) {
      const prefix = `tenants/t/workspaces/${side}-${name.replace(/\W+/g, '-')}/`
      for (const [path, text] of Object.entries(seed)) await storage.put(prefix + path, new TextEncoder().encode(text))
      // The first call downloads the copy; the second is the one under test, over a copy trusted on its marker.
      expect((await run(shells[side], prefix, 'true')).exitCode).toBe(0)
      const result = await run(shells[side], prefix, command)
      const next = await run(shells[side], prefix, inventory)
      const again = await run(shells[side], prefix, inventory)
      expect(again.stdout.text).toBe(next.stdout.text)
      outcome[side] = {
        exitCode: result.exitCode,
        changes: result.filesChanged,
        skipped: result.skipped,
        limit: result.limitExceeded,
        discarded: result.discarded,
        stored: await stored(prefix),
        next: next.stdout.text,
      }
    }
    expect(outcome.overlay).toEqual(outcome.walk)
  })

  it('syncs the same from a command killed at its timeout', async () => {
    const outcome: Record<string, unknown> = {}
    for (const side of ['overlay', 'walk'] as const) {
      const prefix = `tenants/t/workspaces/${side}-timeout/`
      for (const [path, text] of Object.entries(seed)) await storage.put(prefix + path, new TextEncoder().encode(text))
      expect((await run(shells[side], prefix, 'true')).exitCode).toBe(0)
      const command = 'rm -rf a && mkdir a && echo t > a/t.txt && rm c/six.txt && (sleep 60 &) && sleep 60'
      const result = await run(shells[side], prefix, command, 1_500)
      expect(result.timedOut).toBe(true)
      const next = await run(shells[side], prefix, inventory)
      outcome[side] = { changes: result.filesChanged, stored: await stored(prefix), next: next.stdout.text }
    }
    expect(outcome.overlay).toEqual(outcome.walk)
    expect((outcome.overlay as { changes: unknown[] }).changes).toContainEqual({
      path: 'a/t.txt',
      change: 'added',
      size: 2,
    })
  })

  it('keeps nothing of a command that passes the entry limit, and the copy stays as stored', async () => {
    for (const side of ['overlay', 'walk'] as const) {
      const prefix = `tenants/t/workspaces/${side}-limit/`
      for (const [path, text] of Object.entries(seed)) await storage.put(prefix + path, new TextEncoder().encode(text))
      expect((await run(shells[side], prefix, 'true')).exitCode).toBe(0)
      const result = await run(shells[side], prefix, 'rm a/one.txt; for i in $(seq 1 60); do echo $i > f$i; done')
      expect(result.limitExceeded).toBe('workspace file count')
      expect(result.filesChanged).toEqual([])
      expect(await stored(prefix)).toEqual(seed)
      const next = await run(shells[side], prefix, "find . -type f | sort | tr '\\n' ' '")
      expect(next.stdout.text.trim()).toBe(
        Object.keys(seed)
          .map((path) => `./${path}`)
          .sort()
          .join(' '),
      )
    }
  })

  it('drops what a run wrote when its commit failed, though the run before had left the layers empty', async () => {
    const prefix = 'tenants/t/workspaces/overlay-failed-commit/'
    for (const [path, text] of Object.entries(seed)) await storage.put(prefix + path, new TextEncoder().encode(text))
    // This commit empties the layers, so the next checkout takes them as they are.
    expect((await run(shells.overlay, prefix, 'true')).exitCode).toBe(0)
    const failing: ObjectStore = {
      ...storage,
      put: async () => {
        throw new Error('storage is down')
      },
    }
    const failed = shells.overlay.execute({
      storage: failing,
      tenant: 't',
      workspacePrefix: prefix,
      command: 'echo stray > stray.txt && echo changed > top.txt',
      cwd: '',
      timeoutMs: 20_000,
      signal: new AbortController().signal,
    })
    await expect(failed).rejects.toThrow(/storage is down/)
    // What it wrote stayed in the upper layer: the next checkout must empty it, not trust it.
    const next = await run(shells.overlay, prefix, "find . -type f | sort | tr '\\n' ' ' && cat top.txt")
    expect(next.stdout.text).toBe(
      `${Object.keys(seed)
        .map((path) => `./${path}`)
        .sort()
        .join(' ')} top\n`,
    )
    expect(await stored(prefix)).toEqual(seed)
  })

  it('sees a file written to storage outside the command, and a file the command changed reaches storage', async () => {
    const prefix = 'tenants/t/workspaces/overlay-outside/'
    await storage.put(`${prefix}a.txt`, new TextEncoder().encode('first\n'))
    expect((await run(shells.overlay, prefix, 'cat a.txt')).stdout.text).toBe('first\n')
    // Written outside the command, as toolport's file tools write: with the workspace's change marker.
    await storage.put(`${prefix}b.txt`, new TextEncoder().encode('outside\n'))
    await storage.put(`${prefix}a.txt`, new TextEncoder().encode('second\n'))
    await markWorkspaceChanged(storage, prefix)
    const seen = await run(shells.overlay, prefix, 'cat a.txt b.txt && echo third > a.txt')
    expect(seen.stdout.text).toBe('second\noutside\n')
    expect(seen.filesChanged).toEqual([{ path: 'a.txt', change: 'modified', size: 6 }])
    expect(Buffer.from((await storage.get(`${prefix}a.txt`))?.body ?? []).toString()).toBe('third\n')
  })
})

describe('the overlay chain at its edges', () => {
  let work: string
  let options: BwrapOptions

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'toolport-overlay-edges-'))
    await chmod(work, 0o711)
    const settings = loadConfig({ TOOLPORT_WORK_DIR: work }, { toolNames }).sandbox
    options = {
      bwrapPath: 'bwrap',
      limits: settings.limits,
      sandboxUser: process.getuid?.() === 0 ? settings.user : undefined,
      cgroups: undefined,
      usrMergedLinks: await findUsrMergedLinks(),
      relay: undefined,
    }
  })
  afterAll(async () => {
    await rm(work, { recursive: true, force: true })
  })

  it('runs nothing over the copy itself when the overlay cannot be mounted, and says so', async () => {
    const lower = join(work, 'lower')
    await mkdir(lower)
    await writeFile(join(lower, 'kept.txt'), 'kept\n')
    if (options.sandboxUser) await chown(lower, options.sandboxUser.uid, options.sandboxUser.gid)
    const sandbox = createBwrapSandbox({ ...options, overlay: true })
    // No upper, work or merged folder: the mount fails.
    const missing = join(work, 'missing')
    const result = await sandbox.run({
      command: 'echo changed > kept.txt; echo ran > ran.txt',
      workspaceDir: lower,
      overlay: {
        lower,
        upper: join(missing, 'upper'),
        work: join(missing, 'work'),
        merged: join(missing, 'merged'),
        lowerUsage: { bytes: 0, entries: 0 },
      },
      cwd: '',
      timeoutMs: 10_000,
      signal: new AbortController().signal,
    })
    expect(result.exitCode).toBe(97)
    expect(result.output.text).toContain('the workspace overlay could not be mounted; the command did not run')
    expect(await readdir(lower)).toEqual(['kept.txt'])
    expect(await readFile(join(lower, 'kept.txt'), 'utf8')).toBe('kept\n')
  })

  it('names why a work folder cannot take an overlay, so runs walk the copy instead', async () => {
    expect(await probeBwrapOverlay(options, join(work, 'a,b'))).toMatch(/character overlayfs cannot take/)
    // Where it can, the probe passes (this machine mounts unprivileged overlays).
    expect(await probeBwrapOverlay(options, work)).toBeUndefined()
  })

  it('mounts with busybox where it is found and can, else with util-linux mount, and runs the same over either', async () => {
    // A busybox that cannot mount (an applet left out of its build): the probe falls back to mount(8).
    const fakeBin = join(work, 'fake-bin')
    await mkdir(fakeBin, { mode: 0o755 })
    await writeFile(join(fakeBin, 'busybox'), '#!/bin/sh\necho "mount: applet not found" >&2\nexit 1\n', {
      mode: 0o755,
    })
    await chmod(fakeBin, 0o755)
    const real = execFileSync('sh', ['-c', 'command -v busybox'], { encoding: 'utf8' })
    const sides = [
      ['found', process.env.PATH, new RegExp(`mounted by ${real.trim()}\\)$`)],
      ['cannot mount', `${fakeBin}:${process.env.PATH}`, /mounted by mount\)$/],
    ] as const
    for (const [name, path, expected] of sides) {
      const folder = join(work, `mount-${name.replace(/\W/g, '-')}`)
      const config = loadConfig({ TOOLPORT_WORK_DIR: folder }, { toolNames })
      const { shell } = await setupShell(config.sandbox, { ...process.env, PATH: path }, silentLogger, {
        maxFileBytes: config.calls.maxFileBytes,
      })
      if (!shell) throw new Error(`no shell with busybox ${name}`)
      expect(shell.status().enforced.workspace_sync).toMatch(expected)
      const storage = await createFsStorage({ root: join(folder, 'data') })
      const prefix = 'tenants/t/workspaces/mount/'
      await storage.put(`${prefix}kept.txt`, new TextEncoder().encode('kept\n'))
      const result = await shell.execute({
        storage,
        tenant: 't',
        workspacePrefix: prefix,
        command:
          'awk \'$5 == "/workspace" { print $(NF-2) }\' /proc/self/mountinfo && cat kept.txt && echo new > new.txt',
        cwd: '',
        timeoutMs: 20_000,
        signal: new AbortController().signal,
      })
      expect(result.exitCode, result.output.text).toBe(0)
      expect(result.stdout.text).toBe('overlay\nkept\n')
      expect(result.filesChanged).toEqual([{ path: 'new.txt', change: 'added', size: 4 }])
      await shell.close()
    }
  })

  it('reports which sync the service uses', async () => {
    for (const [overlay, expected] of [
      ['auto', /^overlay: /],
      ['off', /walked in full after each command \(no overlay: TOOLPORT_SHELL_OVERLAY=off\)/],
    ] as const) {
      const config = loadConfig(
        { TOOLPORT_WORK_DIR: join(work, `status-${overlay}`), TOOLPORT_SHELL_OVERLAY: overlay },
        { toolNames },
      )
      const { shell } = await setupShell(config.sandbox, process.env, silentLogger, {
        maxFileBytes: config.calls.maxFileBytes,
      })
      expect(shell?.status().enforced.workspace_sync).toMatch(expected)
    }
    // A probe that fails: /readyz is public, so the status names no host path (the log has the detail).
    const warned: unknown[] = []
    const log = { ...silentLogger, warn: (_: string, fields?: Record<string, unknown>) => warned.push(fields) }
    const folder = join(work, 'status,comma')
    const config = loadConfig({ TOOLPORT_WORK_DIR: folder }, { toolNames })
    const { shell } = await setupShell(config.sandbox, process.env, log, { maxFileBytes: config.calls.maxFileBytes })
    const sync = shell?.status().enforced.workspace_sync
    expect(sync).toMatch(/walked in full .*\(no overlay: the probe at start could not mount one \(the log says why\)\)/)
    expect(sync).not.toContain(work)
    expect(warned).toContainEqual({ reason: expect.stringMatching(/character overlayfs cannot take/) })
  })
})
