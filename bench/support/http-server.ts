// A server for bench/http-overhead.ts, run in its own process: `toolport` (the Node service as
// `npm start` builds it: fs storage, a bearer key, the JSON access log and Prometheus metrics, one
// 1 KB file), `plain` (the same work done plainly: a bare Hono + @hono/node-server route that parses
// the JSON body, checks the bearer key, normalises the path, lstats and reads the same 1 KB file and
// answers the same JSON; `plain-sync` the same with synchronous reads) or `bare` (a bare route answering the body toolport answers, given in
// BENCH_BODY, from memory: the floor). Prints one JSON line { ready: true, url }, then serves until
// killed.
import { timingSafeEqual } from 'node:crypto'
import { lstatSync, readFileSync } from 'node:fs'
import { lstat, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join, posix } from 'node:path'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { startNodeService } from '../../src/runtimes/node-service'
import { benchKey, fileContent } from './http-constants'

async function listen(fetch: (request: Request) => Response | Promise<Response>) {
  const server = serve({ fetch, port: 0, hostname: '127.0.0.1' })
  await new Promise<void>((resolve) => server.once('listening', resolve))
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

const mode = process.argv[2]
if (mode === 'toolport') {
  const data = await mkdtemp(join(tmpdir(), 'toolport-bench-http-'))
  // The access log goes to stdout like the real service's; the parent reads and drops it.
  const service = await startNodeService(
    {
      ...process.env,
      TOOLPORT_DATA_DIR: join(data, 'data'),
      TOOLPORT_WORK_DIR: join(data, 'work'),
      TOOLPORT_API_KEYS: `bench=${benchKey}`,
      TOOLPORT_SIGNING_SECRET: 'bench-signing-secret-0123456789abcdef',
      TOOLPORT_SANDBOX: 'none',
    },
    undefined,
    { traceExportWorker: { url: new URL('./otel-export-worker.mjs', import.meta.url) } },
  )
  const { server, url } = await listen(service.app.fetch)
  const written = await fetch(`${url}/v1/tools/write_file?workspace=bench`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${benchKey}` },
    body: JSON.stringify({ path: 'bench.txt', content: fileContent }),
  })
  if (written.status !== 200) throw new Error(`write_file failed: ${written.status}`)
  console.log(JSON.stringify({ ready: true, url }))
  // As the service's own entry does (runtimes/node.ts): what is still buffered (spans) goes out first.
  process.once('SIGTERM', () =>
    server.close(
      () =>
        void service
          .close()
          .then(() => rm(data, { recursive: true, force: true }))
          .then(() => process.exit(0)),
    ),
  )
} else if (mode === 'plain' || mode === 'plain-sync') {
  // The file at the same depth below a data folder as toolport's fs storage keeps it.
  const data = await mkdtemp(join(tmpdir(), 'toolport-bench-plain-'))
  const workspaces = join(data, 'data', 'tenants', 'bench', 'workspaces')
  await mkdir(join(workspaces, 'bench'), { recursive: true })
  await writeFile(join(workspaces, 'bench', 'bench.txt'), fileContent)
  const expected = Buffer.from(`Bearer ${benchKey}`)
  // `plain` reads as most Node code does, through fs/promises (each call a trip through the thread
  // pool); `plain-sync` reads with lstatSync and readFileSync on the event loop, as a route written for
  // small files does (and as toolport does for them).
  const sync = mode === 'plain-sync'
  const app = new Hono()
  app.post('/v1/tools/read_file', async (c) => {
    const presented = Buffer.from(c.req.header('authorization') ?? '')
    if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) {
      return c.json({ error: 'unauthorized' }, 401)
    }
    const workspace = c.req.query('workspace') ?? 'default'
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(workspace)) return c.json({ error: 'bad workspace' }, 400)
    const input = (await c.req.json()) as { path?: unknown }
    if (typeof input.path !== 'string') return c.json({ error: 'path must be a string' }, 400)
    const path = posix.normalize(input.path)
    if (path.startsWith('/') || path === '..' || path.startsWith('../')) return c.json({ error: 'bad path' }, 400)
    const file = join(workspaces, workspace, path)
    const stats = sync ? lstatSync(file, { throwIfNoEntry: false }) : await lstat(file).catch(() => null)
    if (!stats?.isFile()) return c.json({ error: 'not found' }, 404)
    const content = sync ? readFileSync(file, 'utf8') : await readFile(file, 'utf8')
    const lines = content.match(/[^\n]*\n|[^\n]+$/g)?.length ?? 0
    return c.json({ path, content, total_lines: lines, start_line: 1, end_line: lines, truncated: false })
  })
  const { server, url } = await listen(app.fetch)
  console.log(JSON.stringify({ ready: true, url }))
  process.once('SIGTERM', () =>
    server.close(() => void rm(data, { recursive: true, force: true }).then(() => process.exit(0))),
  )
} else if (mode === 'bare') {
  const body = process.env.BENCH_BODY ?? ''
  const contentType = process.env.BENCH_CONTENT_TYPE ?? 'application/json'
  const app = new Hono()
  app.post('/v1/tools/read_file', (c) => c.body(body, 200, { 'content-type': contentType }))
  const { server, url } = await listen(app.fetch)
  console.log(JSON.stringify({ ready: true, url }))
  process.once('SIGTERM', () => server.close(() => process.exit(0)))
} else {
  throw new Error('usage: http-server.ts toolport|plain|plain-sync|bare')
}
