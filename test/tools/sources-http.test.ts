import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalWeb } from '../support/local-web'
import { openApiLintErrors } from '../support/openapi-lint'
import { startTestServer, type TestServer } from '../support/server'
import { startSourceUpstreams } from '../support/source-upstreams'

const adminKey = 'acme-admin-key-0123456789'
const userKey = 'acme-user-key-0123456789'
const scopedKey = 'acme-scoped-key-0123456789'
const gatedKey = 'acme-gated-key-0123456789'
const approverKey = 'acme-approver-key-0123456789'
const otherAdminKey = 'globex-admin-key-0123456789'

let server: TestServer
let upstream: LocalWeb
const clients: Client[] = []

beforeAll(async () => {
  upstream = await startSourceUpstreams()
  server = await startTestServer(
    { TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${upstream.port}` },
    {
      fileKeys: [
        { tenant: 'acme', key: adminKey, admin: true, secrets: { EXCEL_TOKEN: 'Bearer s3cr3t-token' } },
        { tenant: 'acme', key: userKey },
        { tenant: 'acme', key: scopedKey, tools: ['read_file', 'excel:*'] },
        { tenant: 'acme', key: gatedKey, require_approval: ['write'] },
        { tenant: 'acme', key: approverKey, approver: true },
        { tenant: 'globex', key: otherAdminKey, admin: true },
      ],
    },
  )
})
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()))
  await server?.stop()
  await upstream?.stop()
})

// The reference's own manifest shape: aiTools pointing at rpc.methods, which hold the schemas.
function excelManifest(extra: Record<string, unknown> = {}) {
  return {
    id: 'excel',
    kind: 'http',
    url: `${upstream.url}/rpc`,
    headers: { Authorization: { secret: 'EXCEL_TOKEN' } },
    rpc: {
      methods: {
        excel_analyze: {
          description: 'Analyze an Excel file and return sheets and headers.',
          inputSchema: {
            type: 'object',
            properties: { filePath: { type: 'string', description: 'Path of the workbook.' } },
            required: ['filePath'],
          },
          outputSchema: {
            type: 'object',
            properties: {
              success: { type: 'boolean' },
              summary: { type: 'string' },
              sheets: { type: 'array', items: { type: 'string' } },
            },
            required: ['success', 'summary'],
          },
        },
        add: {
          inputSchema: {
            type: 'object',
            properties: { a: { type: 'number' }, b: { type: 'number' } },
            required: ['a', 'b'],
          },
          outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
        },
      },
    },
    aiTools: [
      { name: 'excel_inspect', method: 'excel_analyze', effect: 'read', description: 'Analyze an Excel file.' },
      { name: 'excel_add', method: 'add', effect: 'write', description: 'Add two numbers in the worker.' },
    ],
    ...extra,
  }
}

async function sources(method: string, path: string, key: string, body?: unknown) {
  const response = await fetch(`${server.url}/v1/sources${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  })
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : undefined }
}

async function catalog(key: string, format = 'toolport') {
  const response = await fetch(`${server.url}/v1/tools?format=${format}`, {
    headers: { authorization: `Bearer ${key}` },
  })
  return response.json()
}

async function mcpClient(key: string): Promise<Client> {
  const client = new Client({ name: 'sources-test', version: '1.0.0' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  )
  clients.push(client)
  return client
}

describe('an http source registered by a tenant', () => {
  it('is registered from the reference manifest shape and its tools join the catalog with ids and revisions', async () => {
    const before = await catalog(userKey)
    const put = await sources('PUT', '/excel', adminKey, excelManifest())
    expect(put.status).toBe(201)
    expect(put.body).toMatchObject({ id: 'excel', kind: 'http', owner: 'tenant', status: 'ready' })
    expect(put.body.tools).toEqual(['excel_inspect', 'excel_add'])
    const after = await catalog(userKey)
    expect(after.revision).not.toBe(before.revision)
    const entry = after.tools.find((tool: { name: string }) => tool.name === 'excel_inspect')
    expect(entry).toMatchObject({
      id: 'excel:excel_inspect',
      effect: 'read',
      input_schema: { type: 'object', required: ['filePath'] },
      output_schema: { type: 'object', required: ['success', 'summary'] },
    })
    expect(entry.revision).toMatch(/^[0-9a-f]{16}$/)
    // Built-ins carry ids too.
    expect(after.tools.find((tool: { name: string }) => tool.name === 'read_file').id).toBe('builtin:read_file')
    // The secret header never shows.
    expect(JSON.stringify(put.body)).not.toContain('s3cr3t')
    expect(JSON.stringify(after)).not.toContain('s3cr3t')
  })

  it('runs over REST as JSON-RPC 2.0 with the secret header and the tenant, checked against its output_schema', async () => {
    const call = await server.call('excel_inspect', { filePath: 'data/q3.xlsx' }, { key: userKey })
    expect(call.status).toBe(200)
    expect(call.body).toEqual({ success: true, summary: 'analyzed data/q3.xlsx', sheets: ['Sheet1'] })
    const hit = upstream.hits.at(-1)
    expect(JSON.parse(hit?.body ?? '{}')).toMatchObject({
      jsonrpc: '2.0',
      method: 'excel_analyze',
      params: { filePath: 'data/q3.xlsx' },
    })
    expect(hit?.headers.authorization).toBe('Bearer s3cr3t-token')
    expect(hit?.headers['x-toolport-tenant']).toBe('acme')
    const invalid = await server.call('excel_inspect', { filePath: 3 }, { key: userKey })
    expect(invalid.status).toBe(400)
    expect(invalid.body).toMatchObject({ code: 'validation', field: 'filePath' })
  })

  it('runs over MCP with the SDK client, and as SSE events', async () => {
    const client = await mcpClient(userKey)
    const { tools } = await client.listTools()
    expect(tools.find((tool) => tool.name === 'excel_add')?.annotations).toMatchObject({ readOnlyHint: false })
    const result = await client.callTool({ name: 'excel_add', arguments: { a: 2, b: 3 } })
    expect(result.structuredContent).toEqual({ sum: 5 })
    const response = await fetch(`${server.url}/v1/tools/excel_add`, {
      method: 'POST',
      headers: { authorization: `Bearer ${userKey}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ a: 1, b: 1 }),
    })
    const events = await response.text()
    expect(events).toContain('event: call')
    expect(events).toMatch(/event: result\ndata: \{"sum":2\}/)
  })

  it('appears in every platform format, strict for OpenAI, and in an /openapi.json that lints clean', async () => {
    const openai = await catalog(userKey, 'openai')
    const tool = openai.tools.find((entry: { function: { name: string } }) => entry.function.name === 'excel_inspect')
    expect(tool.function.strict).toBe(true)
    expect(tool.function.parameters).toMatchObject({
      type: 'object',
      additionalProperties: false,
      required: ['filePath'],
    })
    const anthropic = await catalog(userKey, 'anthropic')
    expect(anthropic.tools.find((entry: { name: string }) => entry.name === 'excel_add').input_schema.required).toEqual(
      ['a', 'b'],
    )
    const gemini = await catalog(userKey, 'gemini')
    expect(gemini.tools.some((entry: { name: string }) => entry.name === 'excel_inspect')).toBe(true)
    const document = await (
      await fetch(`${server.url}/openapi.json`, { headers: { authorization: `Bearer ${userKey}` } })
    ).json()
    expect(document.paths['/v1/tools/excel_inspect'].post).toMatchObject({
      operationId: 'excel_inspect',
      'x-effect': 'read',
      'x-openai-isConsequential': false,
    })
    // Each operation carries its own tool's schemas and texts, though all are filled from shared templates.
    const bodyOf = (name: string) => document.paths[`/v1/tools/${name}`].post.requestBody.content['application/json']
    expect(bodyOf('excel_inspect').schema.required).toEqual(['filePath'])
    expect(bodyOf('excel_add').schema.required).toEqual(['a', 'b'])
    expect(document.paths['/v1/tools/excel_add'].post.responses['200'].description).toMatch(/^excel_add: result/)
    expect(await openApiLintErrors(document)).toBeUndefined()
    // Without a key: built-ins (and operator sources) only, never a tenant's.
    const anonymous = await (await fetch(`${server.url}/openapi.json`)).json()
    expect(anonymous.paths['/v1/tools/excel_inspect']).toBeUndefined()
  }, 120_000)

  it('is invisible to another tenant, and a scoped key sees it only through excel:*', async () => {
    const other = await catalog(otherAdminKey)
    expect(other.tools.some((tool: { id: string }) => tool.id.startsWith('excel:'))).toBe(false)
    const call = await server.call('excel_inspect', { filePath: 'x.xlsx' }, { key: otherAdminKey })
    expect(call.status).toBe(404)
    expect((await sources('GET', '/excel', otherAdminKey)).status).toBe(404)
    const scoped = await catalog(scopedKey)
    expect(scoped.tools.map((tool: { name: string }) => tool.name).sort()).toEqual([
      'cancel_job',
      'excel_add',
      'excel_inspect',
      'get_job',
      'read_file',
    ])
  })

  it('goes through dry runs, approvals and jobs like a built-in', async () => {
    const dry = await fetch(`${server.url}/v1/tools/excel_add?dry_run=true`, {
      method: 'POST',
      headers: { authorization: `Bearer ${userKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ a: 4, b: 5 }),
    })
    const preview = await dry.json()
    expect(preview.dry_run).toBe(true)
    expect(preview.preview.request).toMatchObject({ method: 'POST', url: `${upstream.url}/rpc` })
    expect(preview.preview.request.headers.Authorization).toBe('(set)')
    expect(preview.preview.address).toEqual({ allowed: true })
    const pending = await server.call('excel_add', { a: 1, b: 2 }, { key: gatedKey })
    expect(pending.status).toBe(202)
    expect(pending.body.status).toBe('pending_approval')
    const approved = await fetch(pending.body.approve_url, {
      method: 'POST',
      headers: { authorization: `Bearer ${approverKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    })
    expect(await approved.json()).toEqual({ sum: 3 })
    const job = await fetch(`${server.url}/v1/tools/excel_add?async=true`, {
      method: 'POST',
      headers: { authorization: `Bearer ${userKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ a: 10, b: 20 }),
    })
    const started = await job.json()
    expect(job.status).toBe(202)
    let status = started
    for (let attempt = 0; attempt < 100 && status.status !== 'succeeded'; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      status = await (await fetch(started.status_url, { headers: { authorization: `Bearer ${userKey}` } })).json()
    }
    expect(status).toMatchObject({ status: 'succeeded', result: { sum: 30 } })
  })

  it('changes revision when replaced, and answers 503 naming the removal once removed', async () => {
    const first = (await catalog(userKey)).revision
    const replaced = await sources(
      'PUT',
      '/excel',
      adminKey,
      excelManifest({
        aiTools: [{ name: 'excel_add', method: 'add', effect: 'write', description: 'Adds, renamed.' }],
      }),
    )
    expect(replaced.status).toBe(200)
    const second = await catalog(userKey)
    expect(second.revision).not.toBe(first)
    expect(second.tools.some((tool: { name: string }) => tool.name === 'excel_inspect')).toBe(false)
    expect((await sources('GET', '', adminKey)).body.sources).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: 'excel', status: 'ready', tools: ['excel_add'] })]),
    )
    expect((await sources('DELETE', '/excel', adminKey)).status).toBe(204)
    const gone = await server.call('excel_add', { a: 1, b: 1 }, { key: userKey })
    expect(gone.status).toBe(503)
    expect(gone.body).toMatchObject({ code: 'unavailable', source: 'excel', source_status: 'removed' })
    // A tool that never was is still a 404.
    expect((await server.call('excel_never', {}, { key: userKey })).status).toBe(404)
    expect((await sources('DELETE', '/excel', adminKey)).status).toBe(404)
  })
})

describe('source management is closed by default', () => {
  it('refuses keys that are not admin keys, before reading anything', async () => {
    const response = await sources('PUT', '/excel', userKey, excelManifest())
    expect(response.status).toBe(403)
    expect(response.body).toMatchObject({ code: 'permission_denied' })
    expect((await sources('GET', '', userKey)).status).toBe(403)
  })

  it('refuses tenant upstreams on loopback, private and metadata addresses, naming the rule', async () => {
    for (const url of [
      'http://127.0.0.1:9/rpc',
      'http://10.0.0.5/rpc',
      'http://169.254.169.254/latest',
      'http://[::ffff:127.0.0.1]/x',
    ]) {
      const response = await sources('PUT', '/sneaky', adminKey, { ...excelManifest(), id: 'sneaky', url })
      expect(response.status, url).toBe(403)
      expect(response.body, url).toMatchObject({ code: 'permission_denied', field: 'url' })
    }
  })

  it('refuses kinds tenants may not register unless the operator lists them', async () => {
    const command = await sources('PUT', '/tools', adminKey, {
      id: 'tools',
      kind: 'command',
      tools: [
        { name: 'say', description: 'Say.', effect: 'read', input_schema: { type: 'object' }, argv: ['echo', 'hi'] },
      ],
    })
    expect(command.status).toBe(403)
    expect(command.body.hint).toContain('TOOLPORT_TENANT_SOURCE_KINDS')
    const stdio = await sources('PUT', '/local', adminKey, { id: 'local', kind: 'mcp', command: ['node', 'server.js'] })
    expect(stdio.status).toBe(403)
  })
})

describe('broken http upstreams', () => {
  beforeAll(async () => {
    const tool = (name: string, method: string, output?: Record<string, unknown>) => ({
      name,
      method,
      effect: 'read',
      description: `Calls ${method}.`,
      input_schema: { type: 'object', properties: { ms: { type: 'integer' } } },
      ...(output ? { output_schema: output } : {}),
    })
    const put = await sources('PUT', '/broken', adminKey, {
      id: 'broken',
      kind: 'http',
      protocol: 'jsonrpc',
      url: `${upstream.url}/rpc`,
      // Long enough that a loaded machine still reads b_huge past its byte cap before the deadline.
      timeout_seconds: 3,
      max_response_bytes: 1024 * 1024,
      tools: [
        tool('b_slow', 'slow'),
        tool('b_huge', 'huge'),
        tool('b_invalid', 'invalid'),
        tool('b_lie', 'lie', { type: 'object', properties: { sum: { type: 'number' } } }),
        tool('b_refuse', 'refuse'),
        tool('b_explode', 'explode'),
        tool('b_redirect', 'redirect'),
        tool('b_missing', 'no_such_method'),
      ],
    })
    expect(put.body.status).toBe('ready')
  })

  it.each([
    ['b_slow', { ms: 10_000 }, 504, 'timeout'],
    ['b_huge', {}, 502, 'connection'],
    ['b_invalid', {}, 502, 'connection'],
    ['b_lie', {}, 502, 'connection'],
    ['b_refuse', {}, 400, 'validation'],
    ['b_explode', {}, 502, 'connection'],
    ['b_redirect', {}, 403, 'permission_denied'],
    ['b_missing', {}, 502, 'connection'],
  ])('%s answers %s %s with a hint, never a 500', async (name, input, status, code) => {
    const call = await server.call(name, input, { key: userKey })
    expect(call.status, JSON.stringify(call.body)).toBe(status)
    expect(call.body).toMatchObject({ code })
    expect(call.body.hint.length).toBeGreaterThan(10)
    // The service keeps serving everything else.
    expect((await server.call('read_file', { path: 'nothing.txt' }, { key: userKey })).status).toBe(404)
  })
})

describe('hostile manifests', () => {
  const base = { id: 'h', kind: 'http', url: 'https://worker.example.com/rpc' }
  const declared = { name: 'h_tool', description: 'A tool.', effect: 'read', input_schema: { type: 'object' } }
  it.each([
    ['an unknown field, with the closest name', { ...base, tool: [declared] }, 'tool'],
    ['an unknown tool field', { ...base, tools: [{ ...declared, inputSchema: {} }] }, 'tools.0.inputSchema'],
    ['a bad id', { ...base, id: 'Bad Id', tools: [declared] }, 'id'],
    ['a tool name no platform takes', { ...base, tools: [{ ...declared, name: 'rm -rf /' }] }, 'tools.0.name'],
    ['an unknown kind', { ...base, kind: 'ftp', tools: [declared] }, 'kind'],
    [
      'a remote $ref',
      {
        ...base,
        tools: [
          { ...declared, input_schema: { type: 'object', properties: { a: { $ref: 'https://evil.example/s.json' } } } },
        ],
      },
      'tools.0.input_schema.properties.a.$ref',
    ],
    [
      'a schema that is not an object schema',
      { ...base, tools: [{ ...declared, input_schema: { type: 'string' } }] },
      'tools.0.input_schema',
    ],
    ['a schema nested 100 deep', { ...base, tools: [{ ...declared, input_schema: deepSchema(100) }] }, undefined],
    [
      'an invalid pattern',
      {
        ...base,
        tools: [
          { ...declared, input_schema: { type: 'object', properties: { a: { type: 'string', pattern: '([a-z' } } } },
        ],
      },
      'tools.0.input_schema.properties.a.pattern',
    ],
    [
      'a $ref loop that passes through no property',
      {
        ...base,
        tools: [
          {
            ...declared,
            input_schema: {
              type: 'object',
              properties: { x: { $ref: '#/$defs/a' } },
              $defs: { a: { $ref: '#/$defs/b' }, b: { $ref: '#/$defs/a' } },
            },
          },
        ],
      },
      'tools.0.input_schema.properties.x',
    ],
    [
      'a schema that is one of its own allOf',
      { ...base, tools: [{ ...declared, input_schema: { type: 'object', allOf: [{ $ref: '#' }] } }] },
      'tools.0.input_schema',
    ],
    [
      'a $ref to nothing',
      {
        ...base,
        tools: [{ ...declared, input_schema: { type: 'object', properties: { x: { $ref: '#/$defs/gone' } } } }],
      },
      'tools.0.input_schema.properties.x.$ref',
    ],
    ['two tools of one name', { ...base, tools: [declared, declared] }, 'tools.1.name'],
    ['an escape sequence in a title', { ...base, tools: [{ ...declared, title: 'Red\u001b[31m' }] }, 'tools.0.title'],
    ['a line break in a title', { ...base, tools: [{ ...declared, title: 'Two\nlines' }] }, 'tools.0.title'],
    [
      'a bidi override in a description',
      { ...base, tools: [{ ...declared, description: 'Reads \u202eelif\u202c files.' }] },
      'tools.0.description',
    ],
    [
      'a lone surrogate in a description',
      { ...base, tools: [{ ...declared, description: 'Half \ud800 a pair.' }] },
      'tools.0.description',
    ],
    ['a NUL in the source description', { ...base, description: 'A\u0000B', tools: [declared] }, 'description'],
    [
      'a bell in a schema description',
      {
        ...base,
        tools: [
          {
            ...declared,
            input_schema: { type: 'object', properties: { a: { type: 'string', description: 'x\u0007' } } },
          },
        ],
      },
      'tools.0.input_schema.properties.a.description',
    ],
    [
      'a control character in a property name, named escaped',
      {
        ...base,
        tools: [{ ...declared, input_schema: { type: 'object', properties: { 'a\u001bb': { type: 'string' } } } }],
      },
      'tools.0.input_schema.properties.a\\u001Bb',
    ],
    ['a file: URL', { ...base, url: 'file:///etc/passwd', tools: [declared] }, 'url'],
  ])('refuses %s with 400 naming the field', async (_, manifest, field) => {
    const response = await sources('PUT', `/${(manifest as { id: string }).id}`, adminKey, manifest)
    expect(response.status, JSON.stringify(response.body)).toBe(400)
    expect(response.body.code).toBe('validation')
    if (field) expect(response.body.field).toBe(field)
    expect(response.body.hint.length).toBeGreaterThan(10)
  })

  it('takes a schema that recurses through a property (a tree), and a default that looks like a $ref', async () => {
    const tree = {
      type: 'object',
      properties: { root: { $ref: '#/$defs/node' }, note: { type: 'object', default: { $ref: 'not-a-schema' } } },
      $defs: { node: { type: 'object', properties: { children: { type: 'array', items: { $ref: '#/$defs/node' } } } } },
    }
    const response = await sources('PUT', '/tree', adminKey, {
      ...base,
      id: 'tree',
      tools: [{ ...declared, name: 'tree_tool', input_schema: tree }],
    })
    expect(response.status, JSON.stringify(response.body)).toBe(201)
    await sources('DELETE', '/tree', adminKey)
  })

  it('takes line breaks and tabs in descriptions, and text in any script', async () => {
    const response = await sources('PUT', '/prose', adminKey, {
      ...base,
      id: 'prose',
      description: 'Tools\nfor prose.',
      tools: [
        {
          ...declared,
          name: 'prose_tool',
          title: 'Écrire — 書く 😀',
          description: 'First line.\n\tIndented second line.\r\nThird.',
          input_schema: { type: 'object', properties: { naïve: { type: 'string', description: 'A\nB' } } },
        },
      ],
    })
    expect(response.status, JSON.stringify(response.body)).toBe(201)
    const listed = (await catalog(adminKey)).tools.find((tool: { name: string }) => tool.name === 'prose_tool')
    expect(listed.description).toBe('First line.\n\tIndented second line.\r\nThird.')
    await sources('DELETE', '/prose', adminKey)
  })

  it('suggests the field a misspelling meant', async () => {
    const response = await sources('PUT', '/h', adminKey, { ...base, tols: [declared] })
    expect(response.body.hint).toContain('Did you mean tools?')
    const nested = await sources('PUT', '/h', adminKey, { ...base, tools: [{ ...declared, inputSchema: {} }] })
    expect(nested.body.hint).toContain('Did you mean tools.0.input_schema?')
  })

  it('refuses a body that is not JSON, a manifest whose id is not the URL id, and one past the size limit', async () => {
    expect((await sources('PUT', '/h', adminKey, '{not json')).status).toBe(400)
    const mismatch = await sources('PUT', '/other', adminKey, { ...base, tools: [declared] })
    expect(mismatch.status).toBe(400)
    expect(mismatch.body.field).toBe('id')
    const huge = await sources('PUT', '/h', adminKey, {
      ...base,
      tools: [{ ...declared, description: 'x'.repeat(3 * 1024 * 1024) }],
    })
    expect(huge.status).toBe(413)
  })

  it('keeps a pattern that would backtrack for the model, without running it on calls', async () => {
    const put = await sources('PUT', '/slowre', adminKey, {
      id: 'slowre',
      kind: 'http',
      protocol: 'jsonrpc',
      url: `${upstream.url}/rpc`,
      tools: [
        {
          name: 'slowre_add',
          method: 'add',
          effect: 'read',
          description: 'Adds.',
          input_schema: {
            type: 'object',
            properties: { a: { type: 'number' }, b: { type: 'number' }, tag: { type: 'string', pattern: '^(a+)+$' } },
            required: ['a', 'b'],
          },
        },
      ],
    })
    expect(put.body.status).toBe('ready')
    const entry = (await catalog(userKey)).tools.find((tool: { name: string }) => tool.name === 'slowre_add')
    expect(entry.input_schema.properties.tag.pattern).toBe('^(a+)+$')
    // 40 a's and a b: exponential for a backtracking engine; answered at once because it is not run here.
    const call = await server.call('slowre_add', { a: 1, b: 2, tag: `${'a'.repeat(40)}b` }, { key: userKey })
    expect(call.status).toBe(200)
    expect(call.body).toEqual({ sum: 3 })
  })
})

function deepSchema(depth: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: 'object' }
  for (let level = 0; level < depth; level++) schema = { type: 'object', properties: { a: schema } }
  return schema
}
