import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { maxBlockMs, measureLiveness } from '../support/liveness'
import { type McpHttpFixture, startMcpHttpFixture } from '../support/mcp-http-fixture'
import { startTestServer, type TestServer } from '../support/server'
import { putSource } from '../support/sources-api'

// A small declared schema whose levels are anyOf over the next level twice: a few KB that checking one
// wrong value against took 2^levels steps. Refused where it grows, from a manifest, an MCP server's
// inputSchema and an OpenAPI request body; one just within the bound is accepted and checking a wrong
// value against it holds no other request.

const admin = 'fanout-admin-key-0123456789a'
let server: TestServer
let upstream: McpHttpFixture

/** `levels` definitions, each anyOf the next one twice; the last is an object with one string. */
function fanOut(levels: number, prefix = '#/$defs') {
  const defs: Record<string, unknown> = {}
  for (let level = 0; level < levels; level++) {
    const next = { $ref: `${prefix}/l${level + 1}` }
    defs[`l${level}`] = { anyOf: [next, next] }
  }
  defs[`l${levels}`] = { type: 'object', properties: { v: { type: 'string' } }, required: ['v'] }
  return defs
}
const fanOutSchema = (levels: number) => ({ type: 'object', $defs: fanOut(levels), allOf: [{ $ref: '#/$defs/l0' }] })

beforeAll(async () => {
  upstream = await startMcpHttpFixture((() => {
    const mcp = new Server({ name: 'fanout', version: '1' }, { capabilities: { tools: {} } })
    mcp.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [
        { name: 'wide', description: 'A fan-out input.', inputSchema: fanOutSchema(21) },
        { name: 'fine', description: 'A plain input.', inputSchema: { type: 'object', properties: {} } },
      ],
    }))
    mcp.setRequestHandler(CallToolRequestSchema, () => ({ content: [{ type: 'text', text: 'ok' }] }))
    return mcp
  }) as never)
  server = await startTestServer(
    { TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${upstream.port}` },
    { fileKeys: [{ tenant: 'acme', key: admin, admin: true }] },
  )
})
afterAll(async () => {
  await server?.stop()
  await upstream?.stop()
})

const worker = (input_schema: unknown) => ({
  id: 'fan',
  kind: 'http',
  url: upstream.url,
  tools: [{ name: 'fan_tool', description: 'Fans out.', effect: 'read', input_schema }],
})

describe('a declared schema that fans out', () => {
  it('is refused at PUT with 400 naming where it grows', async () => {
    const put = await putSource(server, admin, worker(fanOutSchema(21)))
    expect(put.status, JSON.stringify(put.body)).toBe(400)
    expect(put.body.detail).toMatch(/grows to more than 50000 schema nodes when its \$refs are expanded/)
    expect(put.body.field).toMatch(/^tools\.0\.input_schema\.\$defs\.l\d+$/)
  })

  it('is refused at PUT when a recursion checks the same part of a value twice per level', async () => {
    const node = {
      type: 'object',
      anyOf: [{ properties: { c: { $ref: '#/$defs/node' } } }, { properties: { c: { $ref: '#/$defs/node' } } }],
    }
    const put = await putSource(
      server,
      admin,
      worker({ type: 'object', $defs: { node }, allOf: [{ $ref: '#/$defs/node' }] }),
    )
    expect(put.status, JSON.stringify(put.body)).toBe(400)
    expect(put.body.detail).toMatch(/doubles with every level the value nests/)
  })

  it('refuses a keyword the JSON Schema meta-schema does not allow, naming it', async () => {
    const put = await putSource(
      server,
      admin,
      worker({ type: 'object', properties: { name: { type: 'string', minLength: 'x' } } }),
    )
    expect(put.status, JSON.stringify(put.body)).toBe(400)
    expect(put.body.field).toBe('tools.0.input_schema.properties.name.minLength')
  })

  it('skips an MCP tool whose inputSchema fans out, and serves the others', async () => {
    const put = await putSource(server, admin, { id: 'mcpfan', kind: 'mcp', url: upstream.url })
    expect(put.status, JSON.stringify(put.body)).toBe(201)
    expect(put.body.tools).toEqual(['mcpfan_fine'])
    expect(put.body.reason).toMatch(/skipped wide: .*grows to more than 50000 schema nodes/)
  })

  it('refuses an OpenAPI operation whose request body fans out', async () => {
    const put = await putSource(server, admin, {
      id: 'apifan',
      kind: 'openapi',
      document: {
        openapi: '3.1.0',
        info: { title: 'Fan', version: '1' },
        servers: [{ url: `http://127.0.0.1:${upstream.port}` }],
        paths: {
          '/fan': {
            post: {
              operationId: 'postFan',
              requestBody: {
                content: { 'application/json': { schema: { $ref: '#/components/schemas/l0' } } },
              },
              responses: { '200': { description: 'ok' } },
            },
          },
        },
        components: { schemas: fanOut(21, '#/components/schemas') },
      },
    })
    expect(JSON.stringify(put.body)).toMatch(/grows to more than 50000 schema nodes/)
    expect(put.body.tools ?? []).not.toContain('postFan')
  })

  it('accepts one just within the bound, and checking a wrong value against it holds no one', {
    timeout: 60_000,
  }, async () => {
    const put = await putSource(server, admin, worker(fanOutSchema(13)))
    expect(put.status, JSON.stringify(put.body)).toBe(201)
    const { status, loopMs, healthMs } = await measureLiveness(server, () =>
      server.call('fan_tool', { v: 42 }, { key: admin }),
    )
    expect(status).toBe(400)
    expect(loopMs, 'longest event-loop delay (ms)').toBeLessThan(maxBlockMs)
    expect(healthMs, 'slowest /healthz round trip (ms)').toBeLessThan(maxBlockMs)
  })
})
