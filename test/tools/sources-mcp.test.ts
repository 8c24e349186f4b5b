import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type McpHttpFixture, startMcpHttpFixture } from '../support/mcp-http-fixture'
import { startTestServer, type TestServer } from '../support/server'
import { putSource } from '../support/sources-api'

const adminKey = 'mcp-src-admin-key-0123456789'

let server: TestServer
let upstream: McpHttpFixture
let hostile: McpHttpFixture

beforeAll(async () => {
  upstream = await startMcpHttpFixture()
  hostile = await startMcpHttpFixture()
  server = await startTestServer(
    { TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${upstream.port},127.0.0.1:${hostile.port}` },
    { fileKeys: [{ tenant: 'acme', key: adminKey, admin: true }] },
  )
})
afterAll(async () => {
  await server?.stop()
  await upstream?.stop()
  await hostile?.stop()
})

const put = (manifest: Record<string, unknown>) => putSource(server, adminKey, manifest)

async function catalog() {
  return (await fetch(`${server.url}/v1/tools`, { headers: { authorization: `Bearer ${adminKey}` } })).json()
}

const call = (tool: string, input: unknown) => server.call(tool, input, { key: adminKey, workspace: 'mcp' })

describe('an mcp source over Streamable HTTP', () => {
  it('lists the server tools as {source}_{tool}, effects from annotations, skipping names no platform takes', async () => {
    const registered = await put({ id: 'fx', kind: 'mcp', url: upstream.url, timeout_seconds: 2 })
    expect(registered.status).toBe(201)
    expect(registered.body.status).toBe('ready')
    expect(registered.body.reason).toContain('bad name!')
    const tools = new Map((await catalog()).tools.map((tool: { name: string }) => [tool.name, tool]))
    expect(tools.get('fx_echo')).toMatchObject({ id: 'fx:echo', effect: 'read', title: 'Echo text' })
    expect(tools.get('fx_picture')).toMatchObject({ effect: 'external' })
    expect(tools.get('fx_wipe')).toMatchObject({ effect: 'destructive' })
    expect(tools.get('fx_fail')).toMatchObject({ effect: 'write' })
    expect(tools.get('fx_add')).toMatchObject({
      output_schema: { type: 'object', properties: { sum: { type: 'number' } } },
    })
  })

  it('publishes the server’s titles and descriptions without the characters platforms refuse, and skips a tool whose property name holds one', async () => {
    const tools = new Map((await catalog()).tools.map((tool: { name: string }) => [tool.name, tool]))
    expect(tools.get('fx_shady')).toMatchObject({
      title: 'Shady[31m title',
      description: 'Reads emoclew the  text.\nSecond line.',
      input_schema: { properties: { text: { type: 'string', title: 'Text', description: 'The text.' } } },
    })
    expect(tools.has('fx_badkey')).toBe(false)
    const status = await fetch(`${server.url}/v1/sources/fx`, { headers: { authorization: `Bearer ${adminKey}` } })
    expect((await status.json()).reason).toContain('skipped badkey: inputSchema.properties.ring\\u0007 holds U+0007')
    // The OpenAPI document a custom GPT imports carries the same clean text.
    const document = await (
      await fetch(`${server.url}/openapi.json`, { headers: { authorization: `Bearer ${adminKey}` } })
    ).json()
    const operation = document.paths['/v1/tools/fx_shady'].post
    expect(operation.summary).toBe('Shady[31m title')
    expect(JSON.stringify(operation)).not.toMatch(/\\u00(0[0-8]|1b)|\\u202e|\\ud800/i)
  })

  it('carries text, structured content, images and embedded resources (saved with links) and resource links', async () => {
    expect((await call('fx_echo', { text: 'hello' })).body).toEqual({ content: 'hello', truncated: false })
    expect((await call('fx_add', { a: 2, b: 40 })).body).toEqual({ sum: 42 })
    const picture = await call('fx_picture', {})
    expect(picture.status).toBe(200)
    expect(picture.body.files).toHaveLength(2)
    expect(picture.body.files[0]).toMatchObject({ mime_type: 'image/png', size: 70 })
    expect(picture.body.files[1].path).toMatch(/^outputs\/q3-.*\.csv$/)
    expect(picture.body.openaiFileResponse).toEqual(picture.body.files.map((file: { url: string }) => file.url))
    expect(picture.body.links).toEqual([{ uri: 'https://example.com/big.zip', name: 'big.zip' }])
    const download = await fetch(picture.body.files[1].url)
    expect(await download.text()).toBe('a,b\n1,2\n')
    const read = await call('read_file', { path: picture.body.files[1].path })
    expect(read.body.content).toBe('a,b\n1,2\n')
  })

  it('answers the server failures as problems: a tool error, a result breaking its outputSchema, a timeout', async () => {
    const failed = await call('fx_fail', {})
    expect(failed.status).toBe(502)
    expect(failed.body.detail).toContain('the upstream database is down')
    const lied = await call('fx_lie', {})
    expect(lied.status).toBe(502)
    expect(lied.body.code).toBe('connection')
    // A server's own pattern is never run (a backtracking one froze the service): the result is
    // checked against the schema toolport compiled, whose patterns are not evaluated.
    const patterned = await call('fx_patterned', {})
    expect(patterned.status, JSON.stringify(patterned.body)).toBe(200)
    expect(patterned.body).toEqual({ code: 'abc' })
    const slow = await call('fx_slow', { ms: 5000 })
    expect(slow.status).toBe(504)
    expect(slow.body.code).toBe('timeout')
    const invalid = await call('fx_add', { a: 'two' })
    expect(invalid.status).toBe(400)
  })

  it('is callable through toolport MCP by an SDK client', async () => {
    const client = new Client({ name: 'sources-mcp', version: '1.0.0' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${adminKey}` } },
      }),
    )
    const { tools } = await client.listTools()
    expect(tools.find((tool) => tool.name === 'fx_echo')?.annotations?.readOnlyHint).toBe(true)
    const result = await client.callTool({ name: 'fx_add', arguments: { a: 1, b: 2 } })
    expect(result.structuredContent).toEqual({ sum: 3 })
    await client.close()
  })

  it('refreshes the catalog when the server says its tools changed', async () => {
    const before = await catalog()
    expect(before.tools.some((tool: { name: string }) => tool.name === 'fx_extra')).toBe(false)
    await call('fx_grow', {})
    let after = before
    for (let attempt = 0; attempt < 100 && after.revision === before.revision; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      after = await catalog()
    }
    expect(after.tools.some((tool: { name: string }) => tool.name === 'fx_extra')).toBe(true)
    expect((await call('fx_extra', {})).body.content).toBe('extra')
  })

  it('puts a source whose server hangs or speaks no JSON-RPC in error, and keeps serving the rest', async () => {
    hostile.mode = 'hang'
    const hung = await put({ id: 'hung', kind: 'mcp', url: hostile.url, timeout_seconds: 2 })
    expect(hung.body.status).toBe('error')
    hostile.mode = 'garbage'
    const garbage = await put({ id: 'garbled', kind: 'mcp', url: hostile.url, timeout_seconds: 2 })
    expect(garbage.body.status).toBe('error')
    expect(garbage.body.reason.length).toBeGreaterThan(0)
    expect((await call('fx_echo', { text: 'still' })).body.content).toBe('still')
  })

  it('answers 502 once the server is gone, and 503 naming the source for tools it no longer serves', async () => {
    hostile.mode = 'ok'
    const registered = await put({ id: 'gone', kind: 'mcp', url: hostile.url, timeout_seconds: 2 })
    expect(registered.body.status).toBe('ready')
    await hostile.stop()
    const down = await call('gone_echo', { text: 'x' })
    expect(down.status).toBe(502)
    // Re-registered while down: in error, and its tools are unavailable (503) naming the source's state.
    const again = await put({ id: 'gone', kind: 'mcp', url: hostile.url, timeout_seconds: 2, description: 'again' })
    expect(again.body.status).toBe('error')
    const missing = await call('gone_echo', { text: 'x' })
    expect(missing.status).toBe(503)
    expect(missing.body).toMatchObject({ code: 'unavailable', source: 'gone', source_status: 'error' })
  })
})
