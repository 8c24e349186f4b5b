// A server for bench/http-overhead.ts, run in its own process: `toolport` (the Node service as
// `npm start` builds it: fs storage, a bearer key, the JSON access log and Prometheus metrics, one
// 1 KB file) or `bare` (a bare Hono + @hono/node-server route answering the body toolport answers,
// given in BENCH_BODY). Prints one JSON line { ready: true, url }, then serves until killed.
import { mkdtemp, rm } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
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
  const service = await startNodeService({
    ...process.env,
    TOOLPORT_DATA_DIR: join(data, 'data'),
    TOOLPORT_WORK_DIR: join(data, 'work'),
    TOOLPORT_API_KEYS: `bench=${benchKey}`,
    TOOLPORT_SIGNING_SECRET: 'bench-signing-secret-0123456789abcdef',
    TOOLPORT_SANDBOX: 'none',
  })
  const { server, url } = await listen(service.app.fetch)
  const written = await fetch(`${url}/v1/tools/write_file?workspace=bench`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${benchKey}` },
    body: JSON.stringify({ path: 'bench.txt', content: fileContent }),
  })
  if (written.status !== 200) throw new Error(`write_file failed: ${written.status}`)
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
  throw new Error('usage: http-server.ts toolport|bare')
}
