// A line range at the end of a file over TOOLPORT_MAX_FILE_BYTES (64 MB here, against the default 10 MB
// limit): read_file streams the object, keeps the range and counts the rest. The baseline is the least
// any such read must do: stream the same object from the same fs storage and count its line breaks.
// Both run in this process, alternately, after one discarded warm-up each.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { silentLogger } from '../src/core/logger'
import { createFsStorage } from '../src/storage/fs'
import { readFile } from '../src/tools/files/read'
import { noServices } from '../src/tools/services'
import { createWorkspace } from '../src/workspace/workspace'
import { note, printTable, summarize } from './stats'

const trials = Number(process.env.BENCH_TRIALS ?? 7)
const lineCount = 1_000_000
const root = await mkdtemp(join(tmpdir(), 'toolport-bench-range-'))
try {
  const storage = await createFsStorage({ root })
  const workspace = createWorkspace(storage, 'bench', 'bench')
  const text = Array.from({ length: lineCount }, (_, index) => `${index} ${'x'.repeat(58)}\n`).join('')
  await storage.put(workspace.keyOf('big.log'), text)
  const limits = { maxFileBytes: 10 * 1024 * 1024, maxResponseChars: 100_000 }
  const context = {
    ...noServices,
    workspace,
    limits,
    log: silentLogger,
    signal: new AbortController().signal,
    emit: () => {},
    keyEgress: undefined,
    principal: { tenant: 'bench', id: 'anonymous', tools: undefined },
  }

  async function baseline(): Promise<number> {
    const started = performance.now()
    const object = await storage.getStream(workspace.keyOf('big.log'))
    if (!object) throw new Error('missing')
    let lines = 0
    for await (const chunk of object.body as unknown as AsyncIterable<Uint8Array>) {
      for (let index = chunk.indexOf(10); index !== -1; index = chunk.indexOf(10, index + 1)) lines++
    }
    if (lines !== lineCount) throw new Error(`counted ${lines}`)
    return performance.now() - started
  }

  async function toolport(): Promise<number> {
    const started = performance.now()
    const result = await readFile.run({ path: 'big.log', start_line: lineCount - 99, end_line: lineCount }, context)
    if (result.total_lines !== lineCount || result.end_line !== lineCount) throw new Error('wrong range')
    return performance.now() - started
  }

  await baseline()
  await toolport()
  const base: number[] = []
  const ours: number[] = []
  for (let trial = 0; trial < trials; trial++) {
    base.push(await baseline())
    ours.push(await toolport())
  }
  const baselineStats = summarize(base)
  printTable(`read_file line range of a ${Math.round(text.length / 2 ** 20)} MB file (over the 10 MB limit)`, [
    { name: 'stream and count line breaks (baseline)', stats: baselineStats },
    {
      name: 'read_file start_line..end_line: the last 100 lines',
      stats: summarize(ours),
      baseline: baselineStats,
      target: 1.5,
    },
  ])
  note('read-range: one warm-up of each discarded; the two alternate, in one process, on the fs driver.')
} finally {
  await rm(root, { recursive: true, force: true })
}
