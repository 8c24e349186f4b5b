// Workspace sync: a repeated `execute_command` of `true` on an unchanged 1,000-file, 50 MB workspace
// against `true` on an empty workspace; and a command that changes one file of those 1,000 against the
// same command on a workspace of that one file (the same change and upload, without the 999 others). On
// fs storage and on s3 (s3rver), in one run.
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config/config'
import { silentLogger } from '../src/core/logger'
import { setupShell } from '../src/sandbox/setup'
import { createFsStorage } from '../src/storage/fs'
import type { ObjectStore } from '../src/storage/store'
import { toolNames } from '../src/tools/builtins'
import { type S3rverInstance, s3StorageFor, startS3rver } from '../test/support/s3rver'
import { note, printTable, type Row, type Stats, summarize } from './stats'

// 40 rounds: the medians of a few-millisecond call swing by a tenth between runs of 20 here.
const iterations = Number(process.env.BENCH_ITERATIONS ?? 40)
const fileCount = 1_000
const fileBytes = 50 * 1024
const full = 'tenants/bench/workspaces/full/'
const changing = 'tenants/bench/workspaces/changing/'
const single = 'tenants/bench/workspaces/single/'
const empty = 'tenants/bench/workspaces/empty/'
// Appends to one 50 KB file of the 1,000, so every call uploads it (and the file only grows by a line).
const changeOne = 'date +%s%N >> dir7/file-7.bin'
const targets = { unchanged: { fs: 1.3, s3: 1.5 }, changeOne: 1.5 }
type Side = 'empty' | 'full' | 'single' | 'changing'

const work = await mkdtemp(join(tmpdir(), 'toolport-bench-sync-'))
// The sandbox user must be able to reach the work folder.
await chmod(work, 0o711)
let s3rver: S3rverInstance | undefined
try {
  // TOOLPORT_SHELL_OVERLAY=off measures the walk of the whole copy instead of the overlay.
  const overlay = process.env.TOOLPORT_SHELL_OVERLAY
  const config = loadConfig(
    { TOOLPORT_WORK_DIR: join(work, 'work'), ...(overlay ? { TOOLPORT_SHELL_OVERLAY: overlay } : {}) },
    { toolNames },
  )
  const { shell, problem } = await setupShell(config.sandbox, process.env, silentLogger, {
    maxFileBytes: config.calls.maxFileBytes,
  })
  if (!shell) throw new Error(`no sandbox: ${problem}`)
  const syncMode = shell.status().enforced.workspace_sync ?? 'unknown'

  async function fill(storage: ObjectStore, prefix: string): Promise<void> {
    const pending: Promise<unknown>[] = []
    for (let index = 0; index < fileCount; index++) {
      const body = new Uint8Array(fileBytes).fill(index % 251)
      pending.push(storage.put(`${prefix}dir${index % 20}/file-${index}.bin`, body))
      if (pending.length === 16) await Promise.all(pending.splice(0))
    }
    await Promise.all(pending)
  }

  /** Times the workspaces call by call, in turn, so a load change on this shared machine hits all alike. */
  async function time(storage: ObjectStore): Promise<Record<Side, { wall: number[]; cpu: number[] }>> {
    const run = async (workspacePrefix: string, command: string) => {
      const result = await shell?.execute({
        storage,
        tenant: 'bench',
        workspacePrefix,
        command,
        cwd: '',
        timeoutMs: 60_000,
        signal: new AbortController().signal,
      })
      if (result?.exitCode !== 0) throw new Error(`${command} failed: ${result?.stderr.text}`)
      const expected = command === changeOne ? 1 : 0
      if (result.filesChanged.length !== expected) throw new Error(`${command} changed ${result.filesChanged.length}`)
    }
    const sides: Record<Side, [string, string]> = {
      empty: [empty, 'true'],
      full: [full, 'true'],
      single: [single, changeOne],
      changing: [changing, changeOne],
    }
    // Warm-up: the first call downloads the workspace; only the later calls are timed.
    for (const [workspacePrefix, command] of Object.values(sides)) await run(workspacePrefix, command)
    const samples = {
      empty: { wall: [] as number[], cpu: [] as number[] },
      full: { wall: [] as number[], cpu: [] as number[] },
      single: { wall: [] as number[], cpu: [] as number[] },
      changing: { wall: [] as number[], cpu: [] as number[] },
    }
    const names = Object.keys(sides) as Side[]
    for (let index = 0; index < iterations; index++) {
      // A fresh order each round, so each follows every other alike: what a call leaves to do once it has
      // answered (GC, page cache, the next run's start made ahead) lands on whichever call comes next, and
      // in a fixed rotation the empty workspace always came after a slow commit that had absorbed it.
      const order = shuffled(names)
      for (const side of order) {
        const [workspacePrefix, command] = sides[side]
        // This process's CPU (the sandbox's processes excluded) says what the call costs us whatever the load.
        const cpuBefore = process.cpuUsage()
        const started = performance.now()
        await run(workspacePrefix, command)
        samples[side].wall.push(performance.now() - started)
        const cpu = process.cpuUsage(cpuBefore)
        samples[side].cpu.push((cpu.user + cpu.system) / 1000)
      }
    }
    return samples
  }

  /** A bare listing of the full workspace, the one storage request an unchanged call cannot skip. */
  async function timeListing(storage: ObjectStore): Promise<{ wall: Stats; cpu: Stats }> {
    const wall: number[] = []
    const cpu: number[] = []
    for (let index = 0; index < 10; index++) {
      const cpuBefore = process.cpuUsage()
      const started = performance.now()
      let cursor: string | undefined
      do {
        cursor = (await storage.list(full, cursor === undefined ? {} : { cursor })).cursor
      } while (cursor)
      wall.push(performance.now() - started)
      const used = process.cpuUsage(cpuBefore)
      cpu.push((used.user + used.system) / 1000)
    }
    return { wall: summarize(wall), cpu: summarize(cpu) }
  }

  const ms = (value: number) => `${value.toFixed(0)} ms`
  const rows: Row[] = []
  // What stays per call once the avoidable work is gone, from profiling this benchmark (--cpu-prof and
  // per-phase CPU): printed under a missed target.
  const remains: Record<string, string> = {
    fs: "Since 2026-12-07 the baseline is much cheaper: a run over an empty copy takes no overlay, and every run starts from a chain made ahead (cgroups joined, uid dropped, the overlay namespace made; src/sandbox/executors/warm-start.ts), so the empty workspace went from about 39 to 12 ms while the unchanged one went from about 30 to 21 ms, and the ratio rose although both fell. What the unchanged workspace still pays over the empty one: the overlay mount before the command (measured in the namespace as mount and umount pairs: 3.0 ms a pair with util-linux's mount(8), 2.2 ms with a static busybox, which setup.ts now takes when its probe mounts with it, against 1 ms for two runs of /bin/true), and this process's own work for a 1,000-entry copy (its CPU per call above: the change marker, the manifest, the walk of the empty upper layer; since 2026-12-07 layers a commit emptied are not emptied again before the next run). Plan: the mount made ahead too, once a start can be told its workspace before the run (a start per workspace folder). Common to both sides, and the largest part of the empty workspace's time: the next start made ahead is spawned from this process, and a fork of a Node process costs its event loop time that grows with its memory (measured: 0.9 ms at 52 MB RSS, 5.1 ms at 158 MB, 14 ms at 368 MB), which lands on the next call's checkout; starts forked by a small helper process would take that off every sandbox call. With a file changed, it also pays a second mount that lists the folders the run touched, the HEAD (conflict check), the PUT, the move of the file into the copy and a rewrite of the 1,000-entry manifest. Without it (TOOLPORT_SHELL_OVERLAY=off, or no unprivileged overlay), the one walk of the copy after the run: ~1,000 lstat and ~20 readdir calls through /proc/self/fd handles, 7–10 ms of CPU here.",
    's3 (s3rver)':
      'What remains is the same as on fs plus a HEAD of the change marker on s3rver; with a file changed, s3rver answering the HEAD, the PUT of 50 KB (~20 ms there) and the listing of the markers. The wall times on s3rver swing widely run to run on this shared machine (see p90).',
  }
  const drivers: [string, 'fs' | 's3', () => Promise<ObjectStore>][] = [
    ['fs', 'fs', () => createFsStorage({ root: join(work, 'data') })],
    [
      's3 (s3rver)',
      's3',
      async () => {
        s3rver = await startS3rver()
        return s3StorageFor(s3rver)
      },
    ],
  ]
  for (const [name, kind, create] of drivers) {
    const storage = await create()
    await fill(storage, full)
    await fill(storage, changing)
    await storage.put(`${single}dir7/file-7.bin`, new Uint8Array(fileBytes).fill(7))
    const samples = await time(storage)
    const baseline = summarize(samples.empty.wall)
    const unchanged = summarize(samples.full.wall)
    const changed = summarize(samples.changing.wall)
    const alone = summarize(samples.single.wall)
    const unchangedTarget = targets.unchanged[kind]
    rows.push({ name: `${name}: empty workspace`, stats: baseline })
    rows.push({ name: `${name}: unchanged 1,000 files, 50 MB`, stats: unchanged, baseline, target: unchangedTarget })
    rows.push({ name: `${name}: the command changes the only file of its workspace`, stats: alone })
    rows.push({
      name: `${name}: the command changes 1 of 1,000 files`,
      stats: changed,
      baseline: alone,
      target: targets.changeOne,
    })
    const cpu = (side: Side) => ms(summarize(samples[side].cpu).p50)
    const listing = await timeListing(storage)
    const verdicts = [
      ['unchanged', unchanged.p50 / baseline.p50, unchangedTarget],
      ['one file changed', changed.p50 / alone.p50, targets.changeOne],
    ] as const
    const missed = verdicts.some(([, ratio, target]) => ratio > target)
    const summary = verdicts
      .map(
        ([what, ratio, target]) =>
          `${what} ${ratio <= target ? 'met' : 'MISSED'} (${ratio.toFixed(2)}× of ≤ ${target}×)`,
      )
      .join(', ')
    note(
      `workspace sync on ${name}: ${summary}. Over its baseline (p50): ${ms(unchanged.p50 - baseline.p50)} unchanged, ${ms(changed.p50 - alone.p50)} with one file changed; the change itself (one file changed against \`true\` on an empty workspace) costs ${ms(alone.p50 - baseline.p50)} (${(alone.p50 / baseline.p50).toFixed(2)}×), and with the 999 others ${(changed.p50 / baseline.p50).toFixed(2)}×. CPU of this process per call (p50): ${cpu('empty')} empty, ${cpu('full')} unchanged, ${cpu('single')} one file changed alone, ${cpu('changing')} one of 1,000 changed. A bare listing of the 1,000 objects, which neither call makes any more: ${ms(listing.wall.p50)} (${ms(listing.cpu.p50)} of it CPU here).${missed ? ` ${remains[name] ?? ''}` : ''}`,
    )
  }
  printTable(
    `workspace sync: repeated \`execute_command\`, ${iterations} calls each (interleaved) after 1 warm-up`,
    rows,
  )
  note(
    `workspace sync (${syncMode}): the first call on each workspace (the download) is a discarded warm-up; then \`true\` finds the workspace unchanged, and \`${changeOne}\` changes one 50 KB file in each call (it is uploaded), among 1,000 or alone.`,
  )
} finally {
  await s3rver?.stop()
  await rm(work, { recursive: true, force: true })
}

/** The entries in a random order (Fisher–Yates). */
function shuffled<T>(items: readonly T[]): T[] {
  const copy = [...items]
  for (let index = copy.length - 1; index > 0; index--) {
    const other = Math.floor(Math.random() * (index + 1))
    ;[copy[index], copy[other]] = [copy[other] as T, copy[index] as T]
  }
  return copy
}
