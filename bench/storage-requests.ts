// Storage requests per call on s3: a counting proxy between toolport and s3rver tallies every request
// each call makes (PUT, GET, HEAD, LIST, DELETE), for the file tools and a running job's heartbeat. The
// targets are counts, not times: an overwriting write_file, apply_edit and delete_file at most 3,
// read_file 1, a heartbeat at most 1 per interval.
import { createHeartbeats } from '../src/jobs/heartbeats'
import { createJobStore } from '../src/jobs/job-store'
import type { JobRecord } from '../src/jobs/types'
import { s3StorageFor, startS3rver } from '../test/support/s3rver'
import { startTestServer } from '../test/support/server'
import { note, printRows } from './stats'
import { startCountingProxy } from './support/counting-proxy'

type Kind = 'PUT' | 'GET' | 'HEAD' | 'LIST' | 'DELETE' | 'POST'

const bucket = await startS3rver()
const counts = new Map<Kind, number>()
const proxy = await startCountingProxy(bucket.endpoint, (incoming) => {
  const url = incoming.url ?? ''
  const kind = (incoming.method === 'GET' && /[?&]list-type=/.test(url) ? 'LIST' : (incoming.method ?? 'GET')) as Kind
  counts.set(kind, (counts.get(kind) ?? 0) + 1)
})
const storage = s3StorageFor({ bucket: bucket.bucket, endpoint: proxy.endpoint })
const server = await startTestServer({}, { storage, checkResponses: false })

const total = () => [...counts.values()].reduce((sum, value) => sum + value, 0)
const breakdown = () =>
  [...counts.entries()]
    .sort(([left], [right]) => left.localeCompare(right))
    .map(([kind, value]) => `${value} ${kind}`)
    .join(', ')

const rows: string[][] = []
async function measure(name: string, target: number, call: () => Promise<unknown>, repeats = 5): Promise<void> {
  let most = 0
  let shape = ''
  for (let index = 0; index < repeats; index++) {
    counts.clear()
    await call()
    if (total() >= most) {
      most = total()
      shape = breakdown()
    }
  }
  rows.push([name, String(most), shape, `≤ ${target} ${most <= target ? 'met' : 'MISSED'}`])
}

async function ok(tool: string, input: unknown): Promise<void> {
  const answer = await server.call(tool, input)
  if (answer.status !== 200) throw new Error(`${tool} answered ${answer.status}: ${JSON.stringify(answer.body)}`)
}

try {
  await ok('write_file', { path: 'bench/a.txt', content: 'start\n' })
  let n = 0
  await measure('write_file, overwriting', 3, () => ok('write_file', { path: 'bench/a.txt', content: `v${n++}\n` }))
  await measure('apply_edit', 3, async () => {
    await ok('apply_edit', { path: 'bench/a.txt', old_text: '\n', new_text: '.\n' })
  })
  await measure('read_file', 1, () => ok('read_file', { path: 'bench/a.txt' }))
  let d = 0
  await measure('delete_file', 3, async () => {
    const path = `bench/d${d++}.txt`
    await ok('write_file', { path, content: 'x' })
    counts.clear()
    await ok('delete_file', { path })
  })

  // A running job as the runner leaves it, then its heartbeats: the instance remembers the etag it wrote.
  const jobs = createJobStore(storage)
  const now = new Date().toISOString()
  const job = {
    id: crypto.randomUUID(),
    tenant: 'default',
    tool: 'execute_command',
    workspace: 'default',
    status: 'running',
    created_at: now,
    started_at: now,
    finished_at: null,
    heartbeat_at: now,
    expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    progress: null,
    result: null,
    error: null,
  } as unknown as JobRecord
  await jobs.save(job)
  const intervalMs = 200
  const beats = createHeartbeats(jobs, intervalMs)
  counts.clear()
  beats.watch(job.id, { controller: new AbortController(), tenant: job.tenant })
  const intervals = 10
  await new Promise((resolve) => setTimeout(resolve, intervals * intervalMs + intervalMs / 2))
  beats.unwatch(job.id)
  await beats.beating()
  beats.stop()
  const perInterval = total() / intervals
  rows.push([
    `job heartbeat (per ${intervalMs} ms interval, ${intervals} intervals)`,
    perInterval.toFixed(1),
    breakdown(),
    `≤ 1 ${perInterval <= 1 ? 'met' : 'MISSED'}`,
  ])

  printRows(
    'Storage requests per call (s3, counted by a proxy)',
    ['call', 'requests', 'which', 'target'],
    ['l', 'r', 'l', 'l'],
    rows,
  )
  note(
    'Storage requests: no quota set (TOOLPORT_TENANT_QUOTA_BYTES adds a HEAD and one conditional PUT of the usage record to a write that grows the tenant), and no sandbox copy of the workspace (each instance keeping one adds a DELETE of its change marker to the next write).',
  )
} finally {
  await server.stop()
  proxy.close()
  await bucket.stop()
}
