// Load memory: RSS of the built Node service (its own process) right after start against RSS after
// 10,000 mixed tool calls (runMixedLoad: write, read, list, edit miss, validation error), read from
// /metrics (toolport_process_resident_memory_bytes). Each trial starts a fresh service.
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build } from 'esbuild'
import { runMixedLoad } from '../test/support/load'
import { note, printRows, summarize } from './stats'
import { spawnNode } from './support/child'
import { benchKey } from './support/http-constants'

const trials = Number(process.env.BENCH_TRIALS ?? 3)
const calls = Number(process.env.BENCH_CALLS ?? 10_000)
const targetMB = 50
const MB = 1024 * 1024

// As scripts/build.mjs builds dist/node.js, but to a private file, so a concurrent build of dist/
// cannot change it mid-run (node_modules/.cache: packages stay external and resolve from here).
const bundle = join(process.cwd(), 'node_modules', '.cache', 'toolport-bench', 'node.js')
await build({
  entryPoints: ['src/runtimes/node.ts'],
  outfile: bundle,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  logLevel: 'warning',
})

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

async function rss(url: string): Promise<number> {
  const response = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${benchKey}` } })
  const text = await response.text()
  const match = /^toolport_process_resident_memory_bytes(?:\{[^}]*\})? (\S+)$/m.exec(text)
  if (!match) throw new Error(`no toolport_process_resident_memory_bytes in /metrics (${response.status})`)
  return Number(match[1])
}

async function trial(): Promise<{ start: number; after: number; again: number; requests: number }> {
  const data = await mkdtemp(join(tmpdir(), 'toolport-bench-memory-'))
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  // Logging is silenced, so readiness is its first /healthz answer.
  const child = spawnNode([bundle], {
    PORT: String(port),
    HOST: '127.0.0.1',
    TOOLPORT_DATA_DIR: join(data, 'data'),
    TOOLPORT_WORK_DIR: join(data, 'work'),
    TOOLPORT_API_KEYS: `bench=${benchKey}`,
    TOOLPORT_LOG_LEVEL: 'silent',
    TOOLPORT_SANDBOX: 'none',
  })
  try {
    const deadline = Date.now() + 30_000
    for (;;) {
      try {
        if ((await fetch(`${url}/healthz`)).ok) break
      } catch {}
      if (Date.now() > deadline) throw new Error('the service did not start')
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const start = await rss(url)
    let requests = 0
    const load = async (until: number) => {
      while (requests < until) {
        const result = await runMixedLoad({
          url,
          connections: 8,
          durationSeconds: 2,
          workspace: 'memory',
          headers: { authorization: `Bearer ${benchKey}` },
        })
        if (result.status5xx || result.errors || result.timeouts) throw new Error('errors under load')
        requests += result.requests
      }
      // Let in-flight work settle; no forced GC (the service runs as deployed).
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      return rss(url)
    }
    const after = await load(calls)
    const firstRequests = requests
    // A second round tells a one-off heap expansion from a leak: a leak keeps growing.
    const again = await load(firstRequests + calls)
    return { start, after, again, requests: firstRequests }
  } finally {
    await child.stop()
    await rm(data, { recursive: true, force: true })
  }
}

const runs = []
for (let index = 0; index < trials; index++) runs.push(await trial())
const start = summarize(runs.map((run) => run.start / MB))
const after = summarize(runs.map((run) => run.after / MB))
const growth = summarize(runs.map((run) => (run.after - run.start) / MB))
const again = summarize(runs.map((run) => run.again / MB))
const secondGrowth = summarize(runs.map((run) => (run.again - run.after) / MB))
const spread = (stats: ReturnType<typeof summarize>) =>
  `${stats.p50.toFixed(1)} MB (${stats.min.toFixed(1)}–${stats.max.toFixed(1)})`
printRows(
  `load memory: built Node service, RSS from /metrics, ${trials} fresh processes (median, min–max)`,
  ['what', 'RSS', 'calls', 'growth', 'target'],
  ['l', 'r', 'r', 'r', 'l'],
  [
    ['after start (no calls yet)', spread(start), '0', '', ''],
    [
      `after ≥ ${calls.toLocaleString('en')} mixed calls, 8 connections`,
      spread(after),
      summarize(runs.map((run) => run.requests)).p50.toLocaleString('en'),
      spread(growth),
      `≤ ${targetMB} MB ${growth.p50 <= targetMB ? 'met' : 'MISSED'}`,
    ],
    [
      `after ${calls.toLocaleString('en')} more (leak check: growth since the row above)`,
      spread(again),
      '',
      spread(secondGrowth),
      '',
    ],
  ],
)
note(
  'load memory: no warm-up by design (start-up RSS is the baseline); the load runs in 2 s autocannon rounds until it has made the calls, and RSS is read 1 s after the last.',
)
if (growth.p50 > targetMB) {
  note(
    `load memory MISSED (${growth.p50.toFixed(1)} MB after start): the second ${calls.toLocaleString('en')} calls add ${secondGrowth.p50.toFixed(1)} MB, so ${secondGrowth.p50 < growth.p50 / 4 ? 'most of it is one-off heap and buffer expansion under load, not a leak' : 'memory keeps growing: a possible leak, not profiled in this run'}.`,
  )
}
