import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalWeb } from '../support/local-web'
import { startTestServer, type TestServer } from '../support/server'
import { startSourceUpstreams } from '../support/source-upstreams'
import { putSource } from '../support/sources-api'

// A call to a source whose upstream hangs ends at the source's own timeout with 504: it does not turn
// into a job past the synchronous limit unless its caller asked for one (?async=true).

const adminKey = 'handover-admin-key-0123456789'
let server: TestServer
let upstream: LocalWeb

beforeAll(async () => {
  upstream = await startSourceUpstreams()
  server = await startTestServer(
    // A synchronous limit shorter than the source's timeout: past it, built-ins go on as jobs.
    { TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${upstream.port}`, TOOLPORT_SYNC_TIMEOUT_SECONDS: '1' },
    { fileKeys: [{ tenant: 'acme', key: adminKey, admin: true }] },
  )
  const put = await putSource(server, adminKey, {
    id: 'hang',
    url: `${upstream.url}/rpc`,
    timeout_seconds: 3,
    rpc: { methods: { slow: { inputSchema: { type: 'object', properties: { ms: { type: 'integer' } } } } } },
    aiTools: [{ name: 'hang_slow', method: 'slow', effect: 'read', description: 'Answers after ms.' }],
  })
  expect(put.status, JSON.stringify(put.body)).toBe(201)
})
afterAll(async () => {
  await server?.stop()
  await upstream?.stop()
})

describe('a call to a hanging upstream', () => {
  it("ends at the source's timeout with 504, not as a job nobody asked for", async () => {
    const call = await server.call('hang_slow', { ms: 20_000 }, { key: adminKey })
    expect(call.status, JSON.stringify(call.body)).toBe(504)
    expect(call.body).toMatchObject({ code: 'timeout' })
    expect(call.body.job_id).toBeUndefined()
  })

  it('becomes a job when the caller asks for one', async () => {
    const response = await fetch(`${server.url}/v1/tools/hang_slow?async=true`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ms: 10 }),
    })
    expect(response.status).toBe(202)
    expect(await response.json()).toMatchObject({ job_id: expect.any(String) })
  })
})
