import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { maxBlockMs, measureLiveness } from '../support/liveness'
import { startTestServer, type TestServer } from '../support/server'
import { putSource } from '../support/sources-api'

// An MCP server over HTTP that answers one call with ~16 MB (under the 16 MiB cap) of tiny
// notifications, as an event stream and as a JSON batch: the call is refused, and no other request
// (/healthz) waits on it.

const admin = 'flood-admin-key-0123456789ab'
let server: TestServer
let upstream: Server
let url: string

const notification = JSON.stringify({
  jsonrpc: '2.0',
  method: 'notifications/message',
  params: { level: 'info', data: 'x' },
})
const floodBytes = 15 * 1024 * 1024

function answer(id: unknown, result: unknown) {
  return { jsonrpc: '2.0', id, result }
}

beforeAll(async () => {
  upstream = createServer((request, response) => {
    let text = ''
    request.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8')
    })
    request.on('end', () => {
      const message = JSON.parse(text || '{}')
      if (message.id === undefined) return void response.writeHead(202).end()
      if (message.method === 'initialize') {
        response.writeHead(200, { 'content-type': 'application/json' })
        return void response.end(
          JSON.stringify(
            answer(message.id, {
              protocolVersion: message.params.protocolVersion,
              capabilities: { tools: {} },
              serverInfo: { name: 'flood', version: '1' },
            }),
          ),
        )
      }
      if (message.method === 'tools/list') {
        response.writeHead(200, { 'content-type': 'application/json' })
        const tool = (name: string) => ({ name, description: name, inputSchema: { type: 'object', properties: {} } })
        return void response.end(JSON.stringify(answer(message.id, { tools: [tool('stream'), tool('batch')] })))
      }
      const final = answer(message.id, { content: [{ type: 'text', text: 'done' }] })
      const count = Math.floor(floodBytes / (notification.length + 25))
      if (message.params?.name === 'stream') {
        response.writeHead(200, { 'content-type': 'text/event-stream' })
        const event = `event: message\ndata: ${notification}\n\n`
        response.end(`${event.repeat(count)}event: message\ndata: ${JSON.stringify(final)}\n\n`)
        return
      }
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(`[${`${notification},`.repeat(count)}${JSON.stringify(final)}]`)
    })
  })
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
  const port = (upstream.address() as AddressInfo).port
  url = `http://127.0.0.1:${port}/mcp`
  server = await startTestServer(
    { TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${port}` },
    { fileKeys: [{ tenant: 'acme', key: admin, admin: true }] },
  )
  const put = await putSource(server, admin, { id: 'flood', kind: 'mcp', url, timeout_seconds: 60 })
  expect(put.status, JSON.stringify(put.body)).toBe(201)
}, 60_000)
afterAll(async () => {
  await server?.stop()
  await new Promise((resolve) => upstream?.close(resolve))
})

describe('an MCP server flooding one answer', () => {
  it.each([
    ['an event stream', 'flood_stream'],
    ['a JSON batch', 'flood_batch'],
  ])('refuses the call when it comes as %s, and the event loop stays free', { timeout: 120_000 }, async (_, tool) => {
    const { status, body, loopMs, healthMs } = await measureLiveness(server, () =>
      server.call(tool, {}, { key: admin }),
    )
    expect(status, JSON.stringify(body)).toBe(502)
    expect(body.detail).toContain('more than 10000 messages in one answer')
    expect(loopMs, 'longest event-loop delay (ms)').toBeLessThan(maxBlockMs)
    expect(healthMs, 'slowest /healthz round trip (ms)').toBeLessThan(maxBlockMs)
  })
})
