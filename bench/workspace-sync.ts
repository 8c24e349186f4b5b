// Workspace sync: a repeated `execute_command` of `true` on an unchanged 1,000-file, 50 MB workspace
// against the same call on an empty workspace, on fs storage and on s3 (s3rver), in one run.
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config'
import { silentLogger } from '../src/log'
import { setupShell } from '../src/sandbox/setup'
import { createFsStorage } from '../src/storage/fs'
import { createS3Storage } from '../src/storage/s3'
import type { ObjectStore } from '../src/storage/store'
import { toolNames } from '../src/tools/index'
import { type S3rverInstance, s3rverCredentials, startS3rver } from '../test/support/s3rver'
import { note, printTable, type Row, summarize } from './stats'

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
  const { shell, problem } = await setupShell(config, process.env, silentLogger)
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
  async function time(storage: ObjectStore): Promise<{ empty: number[]; full: number[] }> {
    const run = (workspacePrefix: string) =>
      shell?.execute({
        storage,
        workspacePrefix,
        command: 'true',
        cwd: '',
        timeoutMs: 60_000,
        signal: new AbortController().signal,
      })
    // Warm-up: the first call downloads the workspace; only the later, unchanged calls are timed.
    await run(empty)
    await run(full)
    const samples = { empty: [] as number[], full: [] as number[] }
    for (let index = 0; index < iterations; index++) {
      // Which goes first alternates too, so neither always follows the other's leftovers (GC, page cache).
      const order: ['empty' | 'full', string][] = [
        ['empty', empty],
        ['full', full],
      ]
      if (index % 2 === 1) order.reverse()
      for (const [side, workspacePrefix] of order) {
        const started = performance.now()
        await run(workspacePrefix)
        samples[side].push(performance.now() - started)
      }
    }
    return samples
  }

  const rows: Row[] = []
  const drivers: [string, () => Promise<ObjectStore>][] = [
    ['fs', () => createFsStorage({ root: join(work, 'data') })],
    [
      's3 (s3rver)',
      async () => {
        s3rver = await startS3rver()
        return createS3Storage({
          bucket: s3rver.bucket,
          endpoint: s3rver.endpoint,
          region: 'us-east-1',
          forcePathStyle: true,
          credentials: s3rverCredentials,
        })
      },
    ],
  ]
  for (const [name, create] of drivers) {
    const storage = await create()
    await fill(storage)
    const samples = await time(storage)
    const baseline = summarize(samples.empty)
    const stats = summarize(samples.full)
    rows.push({ name: `${name}: empty workspace`, stats: baseline })
    rows.push({ name: `${name}: unchanged 1,000 files, 50 MB`, stats, baseline, target: 1.5 })
    const missed = stats.p50 / baseline.p50 > 1.5
    if (missed) {
      note(
        `workspace sync on ${name} MISSED (${(stats.p50 / baseline.p50).toFixed(2)}×): an unchanged workspace still costs a full listing of its 1,000 objects and a stat of every local file per call.`,
      )
    }
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
