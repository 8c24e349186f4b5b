// A server for bench/http-overhead.ts, run in its own process: `toolport` (the real app, fs storage,
// a bearer key, one 1 KB file) or `bare` (a bare Hono + @hono/node-server route answering the body
// toolport answers, given in BENCH_BODY). Prints one JSON line with the URL, then serves until killed.
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { startTestServer } from '../../test/support/server'
import { benchKey, fileContent } from './http-constants'

const mode = process.argv[2]
if (mode === 'toolport') {
  const server = await startTestServer({ TOOLPORT_API_KEYS: `bench=${benchKey}` })
  const written = await server.call(
    'write_file',
    { path: 'bench.txt', content: fileContent },
    { key: benchKey, workspace: 'bench' },
  )
  if (written.status !== 200) throw new Error(`write_file failed: ${written.status}`)
  console.log(JSON.stringify({ url: server.url }))
  process.once('SIGTERM', () => void server.stop().then(() => process.exit(0)))
} else if (mode === 'bare') {
  const body = process.env.BENCH_BODY ?? ''
  const contentType = process.env.BENCH_CONTENT_TYPE ?? 'application/json'
  const app = new Hono()
  app.post('/v1/tools/read_file', (c) => c.body(body, 200, { 'content-type': contentType }))
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' })
  await new Promise<void>((resolve) => server.once('listening', resolve))
  console.log(JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }))
  process.once('SIGTERM', () => server.close(() => process.exit(0)))
} else {
  throw new Error('usage: http-server.ts toolport|bare')
}
