import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool } from '../../src/tools/tool'
import { startTestServer, type TestServer } from '../support/server'

const adminKey = 'mcp-admin-key-0123456789'
const readerKey = 'mcp-reader-key-0123456789'
const otherTenantKey = 'mcp-other-key-0123456789'

let server: TestServer
const clients: Client[] = []

beforeAll(async () => {
  server = await startTestServer(
    { TOOLPORT_API_KEYS: `acme=${adminKey},beta=${otherTenantKey}`, TOOLPORT_MAX_BODY_BYTES: '65536' },
    { fileKeys: [{ tenant: 'acme', key: readerKey, tools: ['read_file', 'list_files'] }] },
  )
})
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()))
  await server.stop()
})

async function connect(key: string | undefined, workspace = 'mcp'): Promise<Client> {
  const client = new Client({ name: 'toolport-test', version: '1.0.0' })
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {}
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp?workspace=${workspace}`), {
    requestInit: { headers },
  })
  await client.connect(transport)
  clients.push(client)
  return client
}

type TextBlock = { type: 'text'; text: string }

describe('MCP over Streamable HTTP', () => {
  it('lists the catalog with schemas, titles and annotations from the effect', async () => {
    const client = await connect(adminKey)
    const { tools } = await client.listTools()
    const readFile = tools.find((tool) => tool.name === 'read_file')
    expect(readFile).toMatchObject({
      title: 'Read file',
      inputSchema: { type: 'object', required: ['path'] },
      outputSchema: { type: 'object' },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    })
    expect(tools.find((tool) => tool.name === 'delete_file')?.annotations?.destructiveHint).toBe(true)
  })

  it('calls a tool through the REST path: structured content, a JSON text block, and the same tenant workspace', async () => {
    const client = await connect(adminKey)
    const written = await client.callTool({
      name: 'write_file',
      arguments: { path: 'notes/a.md', content: '# hi\n', mode: null, old_text: null, new_text: null, patches: null },
    })
    expect(written.isError).toBeFalsy()
    expect(written.structuredContent).toMatchObject({ path: 'notes/a.md', created: true })
    expect(JSON.parse((written.content as TextBlock[])[0]?.text ?? '')).toEqual(written.structuredContent)
    // The file landed in tenant acme's workspace "mcp": REST sees it there, and nowhere else.
    expect(
      (await server.call('read_file', { path: 'notes/a.md' }, { key: adminKey, workspace: 'mcp' })).body.content,
    ).toBe('# hi\n')
    expect(
      (await server.call('read_file', { path: 'notes/a.md' }, { key: otherTenantKey, workspace: 'mcp' })).status,
    ).toBe(404)
  })

  it('reports tool failures as isError with the problem document', async () => {
    const client = await connect(adminKey)
    const missing = await client.callTool({ name: 'read_file', arguments: { path: 'nope.txt' } })
    expect(missing.isError).toBe(true)
    expect(JSON.parse((missing.content as TextBlock[])[0]?.text ?? '')).toMatchObject({
      code: 'not_found',
      status: 404,
    })
    const invalid = await client.callTool({ name: 'read_file', arguments: { path: 42 } })
    expect(invalid.isError).toBe(true)
    expect(JSON.parse((invalid.content as TextBlock[])[0]?.text ?? '')).toMatchObject({
      code: 'validation',
      field: 'path',
    })
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/Unknown tool/)
  })

  it('refuses a client without a key, or with a wrong one', async () => {
    await expect(connect(undefined)).rejects.toThrow()
    await expect(connect('wrong-key-0123456789abcdef')).rejects.toThrow()
    const response = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toContain('Bearer')
  })

  it('gives a limited key only its tools, in the list and in calls', async () => {
    const client = await connect(readerKey)
    const { tools } = await client.listTools()
    // The job tools come with every key: a key that may start a long call must be able to collect it.
    expect(tools.map((tool) => tool.name).sort()).toEqual(['cancel_job', 'get_job', 'list_files', 'read_file'])
    const denied = await client.callTool({ name: 'write_file', arguments: { path: 'x.txt', content: 'x' } })
    expect(denied.isError).toBe(true)
    expect(JSON.parse((denied.content as TextBlock[])[0]?.text ?? '')).toMatchObject({ code: 'permission_denied' })
    const listed = await client.callTool({ name: 'list_files', arguments: { path: 'notes' } })
    expect(listed.structuredContent).toMatchObject({ entries: [{ path: 'notes/a.md' }] })
  })

  it('refuses a bad workspace, methods other than POST, foreign browser origins and oversized bodies', async () => {
    await expect(connect(adminKey, '..')).rejects.toThrow()
    const get = await fetch(`${server.url}/mcp`, { headers: { authorization: `Bearer ${adminKey}` } })
    expect(get.status).toBe(405)
    expect(get.headers.get('allow')).toBe('POST')
    const post = (headers: Record<string, string>, body: string) =>
      fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${adminKey}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body,
      })
    const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
    expect((await post({ origin: 'https://evil.example' }, list)).status).toBe(403)
    expect((await post({ origin: 'http://localhost:5173' }, list)).status).toBe(200)
    // Transport-level refusals keep their HTTP status, with the JSON-RPC error as the body.
    const garbled = await post({}, '{"jsonrpc": "2.0", "id": 1, "method"')
    expect(garbled.status).toBe(400)
    expect(await garbled.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } })
    expect((await post({ accept: 'text/html' }, list)).status).toBe(406)
    expect((await post({ 'content-type': 'text/plain' }, list)).status).toBe(415)
    const huge = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { pad: 'x'.repeat(70_000) } })
    const tooBig = await post({}, huge)
    expect(tooBig.status).toBe(413)
    expect(await tooBig.json()).toMatchObject({ code: 'size_exceeded' })
  })
})

describe('MCP file links', () => {
  it('returns files a tool made as resource_link blocks', async () => {
    const makeReport = defineTool({
      name: 'make_report',
      title: 'Make report',
      description: 'Makes a report file (test double for the document tools).',
      effect: 'write',
      input: z.object({}),
      output: z.object({
        files: z.array(z.object({ url: z.string(), name: z.string(), mime_type: z.string(), size: z.number() })),
      }),
      run: async () => ({
        files: [{ url: 'https://files.example.com/r.pdf', name: 'r.pdf', mime_type: 'application/pdf', size: 3 }],
      }),
    })
    const withFiles = await startTestServer({}, { tools: [makeReport] })
    try {
      const client = new Client({ name: 'toolport-test', version: '1.0.0' })
      await client.connect(new StreamableHTTPClientTransport(new URL(`${withFiles.url}/mcp`)))
      const result = await client.callTool({ name: 'make_report', arguments: {} })
      expect(result.content).toContainEqual({
        type: 'resource_link',
        uri: 'https://files.example.com/r.pdf',
        name: 'r.pdf',
        mimeType: 'application/pdf',
        size: 3,
      })
      await client.close()
    } finally {
      await withFiles.stop()
    }
  })
})
