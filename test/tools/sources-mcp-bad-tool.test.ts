import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type McpHttpFixture, startMcpHttpFixture } from '../support/mcp-http-fixture'
import { startTestServer, type TestServer } from '../support/server'
import { putSource } from '../support/sources-api'

// An MCP server whose tool list holds tools the protocol's Tool shape refuses: each is skipped with a
// clean reason in the source's status, and the server's good tools are served.

const adminKey = 'badtool-admin-key-0123456789'
let server: TestServer
let upstream: McpHttpFixture

function serverWithBadTools() {
  const mcp = new Server({ name: 'mixed', version: '1.0.0' }, { capabilities: { tools: {} } })
  mcp.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [
      { name: 'good', description: 'Works.', inputSchema: { type: 'object', properties: {} } },
      { name: 'stringy', description: 'Input schema is a string type.', inputSchema: { type: 'string' } },
      { name: 'missing', description: 'No input schema at all.' },
      { name: 42, description: 'A name that is no string.', inputSchema: { type: 'object' } },
      'not even an object',
    ] as never,
  }))
  mcp.setRequestHandler(CallToolRequestSchema, () => ({ content: [{ type: 'text', text: 'fine' }] }))
  return mcp
}

beforeAll(async () => {
  upstream = await startMcpHttpFixture(serverWithBadTools as never)
  server = await startTestServer(
    { TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${upstream.port}` },
    { fileKeys: [{ tenant: 'acme', key: adminKey, admin: true }] },
  )
})
afterAll(async () => {
  await server?.stop()
  await upstream?.stop()
})

describe('an MCP server with tools the protocol refuses', () => {
  it('is ready with its good tools; each bad one is skipped, named, with a short reason', async () => {
    const put = await putSource(server, adminKey, { id: 'mixed', kind: 'mcp', url: upstream.url })
    expect(put.status, JSON.stringify(put.body)).toBe(201)
    expect(put.body).toMatchObject({ status: 'ready', tools: ['mixed_good'] })
    const reason = String(put.body.reason)
    expect(reason).toContain('skipped "stringy": inputSchema.type')
    expect(reason).toContain('skipped "missing": inputSchema')
    expect(reason).toContain('skipped number 4 of its page: name')
    expect(reason).toContain('skipped number 5 of its page')
    // A reason an admin reads, not a validation dump.
    expect(reason).not.toMatch(/"code":|\[\s*\{/)
    expect(reason.length).toBeLessThan(1_000)
    const called = await server.call('mixed_good', {}, { key: adminKey })
    expect(called.status).toBe(200)
    expect(called.body).toMatchObject({ content: 'fine' })
  })
})
