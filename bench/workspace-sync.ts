// Workspace sync: a repeated `execute_command` of `true` on an unchanged 1,000-file, 50 MB workspace
// against the same call on an empty workspace, on fs storage and on s3 (s3rver), in one run.
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

const iterations = Number(process.env.BENCH_ITERATIONS ?? 20)
const fileCount = 1_000
const fileBytes = 50 * 1024
const full = 'tenants/bench/workspaces/full/'
const empty = 'tenants/bench/workspaces/empty/'

const work = await mkdtemp(join(tmpdir(), 'toolport-bench-sync-'))
// The sandbox user must be able to reach the work folder.
await chmod(work, 0o711)
let s3rver: S3rverInstance | undefined
try {
  const config = loadConfig({ TOOLPORT_WORK_DIR: join(work, 'work') }, { toolNames })
  const { shell, problem } = await setupShell(config.sandbox, process.env, silentLogger, {
    maxFileBytes: config.calls.maxFileBytes,
  })
  if (!shell) throw new Error(`no sandbox: ${problem}`)

  async function fill(storage: ObjectStore): Promise<void> {
    const pending: Promise<unknown>[] = []
    for (let index = 0; index < fileCount; index++) {
      const body = new Uint8Array(fileBytes).fill(index % 251)
      pending.push(storage.put(`${full}dir${index % 20}/file-${index}.bin`, body))
      if (pending.length === 16) await Promise.all(pending.splice(0))
    }
    await Promise.all(pending)
  }

  /** Times both workspaces call by call, alternating, so a load change on this shared machine hits both alike. */
  async function time(storage: ObjectStore): Promise<Record<'empty' | 'full', { wall: number[]; cpu: number[] }>> {
    const run = (workspacePrefix: string) =>
      shell?.execute({
        storage,
        tenant: 'bench',
        workspacePrefix,
        command: 'true',
        cwd: '',
        timeoutMs: 60_000,
        signal: new AbortController().signal,
      })
    // Warm-up: the first call downloads the workspace; only the later, unchanged calls are timed.
    await run(empty)
    await run(full)
    const samples = {
      empty: { wall: [] as number[], cpu: [] as number[] },
      full: { wall: [] as number[], cpu: [] as number[] },
    }
    for (let index = 0; index < iterations; index++) {
      // Which goes first alternates too, so neither always follows the other's leftovers (GC, page cache).
      const order: ['empty' | 'full', string][] = [
        ['empty', empty],
        ['full', full],
      ]
      if (index % 2 === 1) order.reverse()
      for (const [side, workspacePrefix] of order) {
        // This process's CPU (the sandbox's processes excluded) says what the call costs us whatever the load.
        const cpuBefore = process.cpuUsage()
        const started = performance.now()
        await run(workspacePrefix)
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
  // What stays per unchanged call once the avoidable work is gone, from profiling this benchmark (--cpu-prof
  // and per-phase CPU): printed under a missed target.
  const remains: Record<string, string> = {
    fs: 'What remains is the work an unchanged call needs: the listing (a readdir per folder and an lstat per object, for the etags) and two walks of the mirror (at checkout, to heal changes made outside a run; at commit, to find what the command changed), ~3,000 lstat and ~60 readdir calls in all. In the profile those syscalls are the top self time; manifest JSON parsing and rewriting, a promise per file and per-path validation are gone. On this shared 2-core machine the wall-time overhead ran 1.3–2.4× the CPU overhead above; the empty call is mostly process and namespace start-up.',
    's3 (s3rver)':
      "What remains is mostly s3rver: to answer one 1,000-key ListObjectsV2 it stats every file of its tree and reads each object's metadata and MD5 files, ~165 ms of CPU in its own process per listing (read from /proc while profiling), more than the whole empty call; toolport's part of the listing is the SDK's XML parse (the CPU figure above). The mirror work is the same as on fs. Meeting 1.5× here means not listing at all, i.e. a change marker that every writer of the bucket keeps current; toolport does not own every writer, so there is none.",
  }
  const drivers: [string, () => Promise<ObjectStore>][] = [
    ['fs', () => createFsStorage({ root: join(work, 'data') })],
    [
      's3 (s3rver)',
      async () => {
        s3rver = await startS3rver()
        return s3StorageFor(s3rver)
      },
    ],
  ]
  for (const [name, create] of drivers) {
    const storage = await create()
    await fill(storage)
    const samples = await time(storage)
    const baseline = summarize(samples.empty.wall)
    const stats = summarize(samples.full.wall)
    rows.push({ name: `${name}: empty workspace`, stats: baseline })
    rows.push({ name: `${name}: unchanged 1,000 files, 50 MB`, stats, baseline, target: 1.5 })
    const cpuEmpty = summarize(samples.empty.cpu).p50
    const cpuFull = summarize(samples.full.cpu).p50
    const listing = await timeListing(storage)
    const ratio = stats.p50 / baseline.p50
    note(
      `workspace sync on ${name}: ${ratio <= 1.5 ? 'met' : 'MISSED'} (${ratio.toFixed(2)}×). The 1.5× target allows ${ms(baseline.p50 / 2)} over the empty call; the unchanged call took ${ms(stats.p50 - baseline.p50)} more (p50). CPU of this process per call (p50): ${ms(cpuEmpty)} empty, ${ms(cpuFull)} unchanged. A bare listing of the 1,000 objects alone: ${ms(listing.wall.p50)} (${ms(listing.cpu.p50)} of it CPU here).${ratio <= 1.5 ? '' : ` ${remains[name] ?? ''}`}`,
    )
  }
  printTable(
    `workspace sync: repeated \`execute_command\` of \`true\`, ${iterations} calls each (interleaved) after 1 warm-up`,
    rows,
  )
  note(
    'workspace sync: the first call on each workspace (the download) is a discarded warm-up; the timed calls find the workspace unchanged.',
  )
} finally {
  await s3rver?.stop()
  await rm(work, { recursive: true, force: true })
}
