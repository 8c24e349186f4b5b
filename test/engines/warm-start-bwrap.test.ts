import { chmod, chown, mkdir, mkdtemp, readdir, readFile, readlink, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/config'
import { type BwrapOptions, createBwrapSandbox, findUsrMergedLinks } from '../../src/sandbox/executors/bwrap'
import { probeCgroups } from '../../src/sandbox/executors/cgroup'
import type { Sandbox, SandboxRunRequest } from '../../src/sandbox/executors/sandbox'
import { toolNames } from '../../src/tools/builtins'

// The bwrap executor starts each run's first process ahead (src/sandbox/executors/warm-start.ts): a shell
// that joined the run's cgroups and waits for its program. Real bubblewrap, real cgroups where writable.

/** This process's children that are waiting starts: /bin/sh reading its program from descriptor 9. */
async function waitingStarts(): Promise<Array<{ pid: number; cgroup: string }>> {
  const found: Array<{ pid: number; cgroup: string }> = []
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '')
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
    if (parent !== process.pid) continue
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '')
    if (!cmdline.includes('read -r line <&9')) continue
    found.push({ pid: Number(entry), cgroup: await readFile(`/proc/${entry}/cgroup`, 'utf8').catch(() => '') })
  }
  return found
}

/** The waiting starts once `done` holds (a guard against a hang, not a speed goal). */
async function startsUntil(
  done: (starts: Array<{ pid: number; cgroup: string }>) => boolean,
): Promise<Array<{ pid: number; cgroup: string }>> {
  for (let tries = 0; ; tries++) {
    const starts = await waitingStarts()
    if (done(starts) || tries === 250) return starts
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe('bwrap runs from starts made ahead', () => {
  let work: string
  let workspace: string
  let options: BwrapOptions
  let sandbox: Sandbox

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'toolport-warm-start-'))
    await chmod(work, 0o711)
    workspace = join(work, 'workspace')
    await mkdir(workspace)
    const settings = loadConfig({ TOOLPORT_WORK_DIR: work }, { toolNames }).sandbox
    const sandboxUser = process.getuid?.() === 0 ? settings.user : undefined
    if (sandboxUser) await chown(workspace, sandboxUser.uid, sandboxUser.gid)
    options = {
      bwrapPath: 'bwrap',
      limits: settings.limits,
      sandboxUser,
      cgroups: await probeCgroups(),
      usrMergedLinks: await findUsrMergedLinks(),
      relay: undefined,
    }
    sandbox = createBwrapSandbox(options)
  })
  afterAll(async () => {
    await sandbox?.close?.()
    await rm(work, { recursive: true, force: true })
  })

  const request = (more: Partial<SandboxRunRequest>): SandboxRunRequest => ({
    command: 'true',
    workspaceDir: workspace,
    cwd: '',
    timeoutMs: 20_000,
    signal: new AbortController().signal,
    ...more,
  })

  it('keeps the next two runs’ starts waiting, each in cgroups of its own, once a run is over', async () => {
    expect((await sandbox.run(request({}))).exitCode).toBe(0)
    const starts = await startsUntil((found) => found.length > 1)
    expect(starts).toHaveLength(2)
    if (options.cgroups) {
      const groups = starts.map((start) => /toolport-runs\/([0-9a-f-]{36})/.exec(start.cgroup)?.[1])
      expect(groups.every((group) => group !== undefined)).toBe(true)
      expect(new Set(groups).size).toBe(2)
    }
    // The run that takes it is in those cgroups: the command sees them as its own.
    const taken = await sandbox.run(request({ command: 'cat /proc/self/cgroup' }))
    expect(taken.exitCode, taken.output.text).toBe(0)
    if (options.cgroups) {
      const group = /toolport-runs\/([0-9a-f-]{36})/.exec(starts[0]?.cgroup ?? '')?.[1]
      // The sandbox has a cgroup namespace of its own: the group is its root, seen as "/".
      expect(taken.stdout.text).not.toContain('toolport-runs')
      expect(group).toBeDefined()
    }
  })

  it('waits past the uid drop, and for a sandbox that takes overlays in the overlay’s own user namespace', async () => {
    const shared = await startsUntil((found) => found.length > 1)
    const [plain] = shared
    if (!plain) throw new Error('no start is waiting')
    const ownNamespace = await readlink('/proc/self/ns/user')
    expect(await readlink(`/proc/${plain.pid}/ns/user`)).toBe(ownNamespace)
    if (options.sandboxUser) {
      const status = await readFile(`/proc/${plain.pid}/status`, 'utf8')
      expect(status).toMatch(new RegExp(`^Uid:\\s+${options.sandboxUser.uid}\\s`, 'm'))
    }
    const overlaid = createBwrapSandbox({ ...options, overlay: true })
    try {
      const layers = join(work, 'layers')
      const [lower, upper, layerWork, merged] = ['lower', 'upper', 'work', 'merged'].map((name) => join(layers, name))
      for (const folder of [layers, lower, upper, layerWork, merged] as string[]) {
        await mkdir(folder, { recursive: true })
        if (options.sandboxUser) await chown(folder, options.sandboxUser.uid, options.sandboxUser.gid)
      }
      const overlay = {
        lower: lower as string,
        upper: upper as string,
        work: layerWork as string,
        merged: merged as string,
        lowerUsage: { bytes: 0, entries: 0 },
      }
      const result = await overlaid.run(request({ workspaceDir: overlay.lower, overlay, command: 'echo up > new' }))
      expect(result.exitCode, result.output.text).toBe(0)
      expect(await readFile(join(overlay.upper, 'new'), 'utf8')).toBe('up\n')
      // Once its run is over, the overlay sandbox keeps starts of its own waiting beside the shared one's.
      const next = (await startsUntil((found) => found.length > shared.length)).find(
        (start) => !shared.some((kept) => kept.pid === start.pid),
      )
      if (!next) throw new Error('the overlay sandbox keeps no start waiting')
      expect(await readlink(`/proc/${next.pid}/ns/user`)).not.toBe(ownNamespace)
    } finally {
      await overlaid.close?.()
    }
  })

  it('passes the program word for word: quotes, line breaks, globs and dollars stay as written', async () => {
    const argv = ['printf', '[%s]\\n', "it's", 'two\nlines', '$HOME', '*', '"x"', '\\', '', ' spaced ']
    const result = await sandbox.run(request({ argv }))
    expect(result.exitCode, result.output.text).toBe(0)
    expect(result.stdout.text).toBe('[it\'s]\n[two\nlines]\n[$HOME]\n[*]\n["x"]\n[\\]\n[]\n[ spaced ]\n')
    const shell = await sandbox.run(request({ command: "a='one two'\necho \"$a\" | tr o 0; echo 'end'" }))
    expect(shell.stdout.text).toBe('0ne tw0\nend\n')
  })

  it('runs a command of 60 KB, and gives stdin or an end of input', async () => {
    const long = `echo ${'x'.repeat(60_000)} | wc -c`
    const result = await sandbox.run(request({ command: long }))
    expect(result.exitCode, result.output.text).toBe(0)
    expect(result.stdout.text.trim()).toBe('60001')
    expect((await sandbox.run(request({ command: 'cat', stdin: 'fed\n' }))).stdout.text).toBe('fed\n')
    const none = await sandbox.run(request({ command: 'cat; echo done' }))
    expect(none.stdout.text).toBe('done\n')
  })

  it('leaves the sandbox no descriptor of the start beyond its standard three', async () => {
    const result = await sandbox.run(request({ command: 'ls /proc/self/fd | sort -n | tr "\\n" " "' }))
    expect(result.exitCode, result.output.text).toBe(0)
    // 0, 1, 2, and the descriptor ls opens to read the folder (3, the lowest free one): none of the start's
    // own (3 to 9: bwrap's options and files, the program), which would push it higher. (dash keeps a
    // descriptor of its own far above, as it did before starts were made ahead.)
    const fds = result.stdout.text.trim().split(' ').map(Number)
    expect(fds.slice(0, 4)).toEqual([0, 1, 2, 3])
    expect(fds.filter((fd) => fd > 3 && fd < 10)).toEqual([])
  })

  it('replaces a start that was killed while it waited', async () => {
    const starts = await startsUntil((found) => found.length > 1)
    if (starts.length === 0) throw new Error('no start is waiting')
    for (const start of starts) process.kill(start.pid, 'SIGKILL')
    await new Promise((resolve) => setTimeout(resolve, 50))
    const result = await sandbox.run(request({ command: 'echo still' }))
    expect(result.exitCode, result.output.text).toBe(0)
    expect(result.stdout.text).toBe('still\n')
  })

  it('stops its waiting start and removes its cgroups on close', async () => {
    // The shared sandbox keeps two starts waiting; a second sandbox makes two of its own after its run.
    await sandbox.run(request({}))
    await startsUntil((starts) => starts.length === 2)
    const own = createBwrapSandbox(options)
    expect((await own.run(request({}))).exitCode).toBe(0)
    const all = await startsUntil((starts) => starts.length === 4)
    expect(all).toHaveLength(4)
    await own.close?.()
    const left = await startsUntil((starts) => starts.length === 2)
    const closed = all.filter((start) => !left.some((kept) => kept.pid === start.pid))
    expect(closed).toHaveLength(2)
    if (options.cgroups) {
      for (const start of closed) {
        const line = start.cgroup.split('\n').find((entry) => /^\d+:(memory|):/.test(entry)) ?? ''
        const path = line.split(':')[2] ?? ''
        expect(path).toMatch(/toolport-runs\/[0-9a-f-]{36}$/)
        const folder = line.startsWith('0::') ? `/sys/fs/cgroup${path}` : `/sys/fs/cgroup/memory${path}`
        await expect(readdir(folder)).rejects.toThrow(/ENOENT/)
      }
    }
  })
})
