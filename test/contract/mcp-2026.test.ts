import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestServer } from '../support/server'

// MCP 2026-07-28 on the same /mcp as the 2025 versions: no initialize, the envelope in every request's
// _meta, server/discover, cacheable lists, the Tasks extension for calls past the synchronous limit.

const key = 'mcp2026-key-0123456789abcdef'
let server: TestServer

beforeAll(async () => {
  server = await startTestServer(
    { TOOLPORT_API_KEYS: `acme=${key}`, TOOLPORT_SYNC_TIMEOUT_SECONDS: '1' },
    { shell: true },
  )
})
afterAll(async () => {
  await server?.stop()
})

const tasks = 'io.modelcontextprotocol/tasks'

async function connect(extensions: Record<string, object> = {}): Promise<Client> {
  const client = new Client({ name: 'mcp2026-test', version: '1.0.0' }, {
    versionNegotiation: { mode: { pin: '2026-07-28' } },
    capabilities: { extensions },
  } as never)
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  )
  return client
}

const envelope = (extensions: Record<string, object> = {}) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': { extensions },
})

/** A 2026-07-28 request; `message` overrides fields of the JSON-RPC message itself (id, jsonrpc). */
const post = (
  method: string,
  params: Record<string, unknown>,
  headers: Record<string, string> = {},
  message: Record<string, unknown> = {},
) =>
  fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      // 2026-07-28 names the tool of a tools/call in a header too, for routing without the body.
      ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}),
      ...(typeof params.taskId === 'string' ? { 'mcp-name': params.taskId } : {}),
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params, ...message }),
  })

describe('MCP 2026-07-28', () => {
  it('answers server/discover with the capabilities, the Tasks extension and 2026-07-28', async () => {
    const response = await post('server/discover', { _meta: envelope() })
    expect(response.status).toBe(200)
    const { result } = await response.json()
    expect(result.supportedVersions).toEqual(['2026-07-28'])
    expect(result.capabilities).toMatchObject({
      tools: { listChanged: false },
      resources: { listChanged: false },
      prompts: { listChanged: false },
      completions: {},
      extensions: { [tasks]: {} },
    })
    expect(result._meta['io.modelcontextprotocol/serverInfo'].name).toBe('toolport')
  })

  it('lists tools as a cacheable result that names the catalog revision', async () => {
    const response = await post('tools/list', { _meta: envelope() })
    const { result } = await response.json()
    expect(result.ttlMs).toBe(30_000)
    expect(result.cacheScope).toBe('private')
    expect(result._meta['toolport/catalog_revision']).toMatch(/^[0-9a-f]+$/)
    expect(result.tools.map((tool: { name: string }) => tool.name)).toContain('read_file')
    const revision = await (
      await fetch(`${server.url}/v1/tools`, { headers: { authorization: `Bearer ${key}` } })
    ).json()
    expect(result._meta['toolport/catalog_revision']).toBe(revision.revision)
  })

  it('refuses a request whose headers and body disagree, and one of an unknown revision', async () => {
    const mismatch = await post('tools/list', { _meta: envelope() }, { 'mcp-method': 'tools/call' })
    expect(mismatch.status).toBe(400)
    expect((await mismatch.json()).error.code).toBe(-32020)
    const unknown = await post(
      'tools/list',
      { _meta: { ...envelope(), 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
      { 'mcp-protocol-version': '2099-01-01' },
    )
    const answer = await unknown.json()
    expect(answer.error.code).toBe(-32022)
    expect(answer.error.data.supported).toContain('2026-07-28')
  })

  it('serves the SDK 2.4 client with no initialize: tools, resources, the context prompt', async () => {
    const client = await connect()
    const written = await client.callTool({ name: 'write_file', arguments: { path: 'a.txt', content: 'hello' } })
    expect(written.isError).toBeFalsy()
    const read = await client.callTool({ name: 'read_file', arguments: { path: 'a.txt' } })
    expect(read.structuredContent).toMatchObject({ content: 'hello' })
    const resource = await client.readResource({ uri: 'toolport://workspace/default/a.txt' })
    expect(resource.contents).toEqual([
      { uri: 'toolport://workspace/default/a.txt', mimeType: 'text/plain; charset=utf-8', text: 'hello' },
    ])
    const prompt = await client.getPrompt({ name: 'toolport_context' })
    expect((prompt.messages.at(0)?.content as unknown as { text: string } | undefined)?.text).toContain(
      'workspace "default"',
    )
    const missing = await client.readResource({ uri: 'toolport://workspace/default/none.txt' }).catch((error) => error)
    expect(missing.code).toBe(-32602)
    await client.close()
  })

  it('answers a call past the synchronous limit with its task, which tasks/get follows to the result', async () => {
    // Raw: the SDK 2.4 client has no Tasks runtime (it refuses resultType "task" from callTool).
    const withTasks = envelope({ [tasks]: {} })
    const call = await post('tools/call', {
      name: 'execute_command',
      arguments: { command: 'sleep 2; echo late' },
      _meta: withTasks,
    })
    const created = (await call.json()).result
    expect(created).toMatchObject({ resultType: 'task', status: 'working', pollIntervalMs: 2000 })
    const taskId = created.taskId as string
    const rest = await (
      await fetch(`${server.url}/v1/jobs/${taskId}`, { headers: { authorization: `Bearer ${key}` } })
    ).json()
    expect(rest.tool).toBe('execute_command')
    let task: Record<string, unknown> = created
    for (let attempt = 0; attempt < 60 && task.status === 'working'; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 250))
      task = (await (await post('tasks/get', { taskId, _meta: withTasks })).json()).result
    }
    expect(task.status).toBe('completed')
    expect(task.resultType).toBe('complete')
    expect((task.result as { structuredContent: { stdout: string } }).structuredContent.stdout).toBe('late\n')
    const other = await (await post('tasks/get', { taskId: 'no-such-task', _meta: withTasks })).json()
    expect(other.error.code).toBe(-32602)
    // The extension's methods are for clients that declare it on the request.
    const undeclared = await (await post('tasks/get', { taskId, _meta: envelope() })).json()
    expect(undeclared.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [tasks]: {} } } },
    })
    const update = await (await post('tasks/update', { taskId, inputResponses: {}, _meta: withTasks })).json()
    expect(update.result.resultType).toBe('complete')
    const cancelled = await (await post('tasks/cancel', { taskId, _meta: withTasks })).json()
    expect(cancelled.result.resultType).toBe('complete')
  })

  it('answers the same slow call without the extension with the job to poll, never a task', async () => {
    const client = await connect()
    const result = await client.callTool({ name: 'execute_command', arguments: { command: 'sleep 2; echo late' } })
    expect(result.isError).toBe(true)
    expect((result.content as Array<{ text: string }>)[0]?.text).toMatch(/^Not an error: execute_command/)
    await client.close()
  })

  it('answers a plain tools/call directly exactly as the SDK answers it', async () => {
    // A plain call (the envelope's three claims) is answered without the SDK's per-request server; the
    // same call with a log level in its envelope goes through the SDK. Both must read the same.
    const written = await post('tools/call', {
      name: 'write_file',
      arguments: { path: 'direct.txt', content: 'one\ntwo\n' },
      _meta: envelope(),
    })
    expect(written.status).toBe(200)
    const through = (name: string, args: Record<string, unknown>, sdk: boolean) =>
      post('tools/call', {
        name,
        arguments: args,
        _meta: sdk ? { ...envelope(), 'io.modelcontextprotocol/logLevel': 'error' } : envelope(),
      }).then(async (response) => ({ status: response.status, body: await response.json() }))
    // A problem carries its request's id: the one thing two answers may not share.
    const comparable = (answer: { status: number; body: unknown }) =>
      JSON.parse(JSON.stringify(answer).replace(/\\"request_id\\":\\"[^"\\]+\\"/g, ''))
    for (const [name, args] of [
      ['read_file', { path: 'direct.txt' }],
      ['read_file', { path: '../escape' }],
      ['read_file', { path: 'direct.txt', surplus: true }],
      ['no_such_tool', {}],
    ] as const) {
      const direct = await through(name, args, false)
      const sdk = await through(name, args, true)
      expect(comparable(direct)).toEqual(comparable(sdk))
      expect(direct.status).toBe(200)
    }
    const { body } = await through('read_file', { path: 'direct.txt' }, false)
    expect(body.result.resultType).toBe('complete')
    expect(body.result.structuredContent.content).toBe('one\ntwo\n')
    expect(body.result._meta['io.modelcontextprotocol/serverInfo'].name).toBe('toolport')
    expect((await through('no_such_tool', {}, false)).body.error.code).toBe(-32602)
  })

  it('leaves every tools/call the direct path does not take to the SDK, which refuses the malformed ones', async () => {
    // The direct path answers before the SDK classifies: each of these must get the SDK's own answer.
    const call = { name: 'read_file', arguments: { path: 'direct.txt' }, _meta: envelope() }
    const nameDisagrees = await post('tools/call', call, { 'mcp-name': 'write_file' })
    expect((await nameDisagrees.json()).error, 'Mcp-Name and the body disagree').toBeDefined()
    const noHeaderName = await post('tools/call', call, { 'mcp-name': '' })
    expect((await noHeaderName.json()).error, 'an empty Mcp-Name').toBeDefined()
    const nullId = await post('tools/call', call, {}, { id: null })
    expect(JSON.stringify(await nullId.json()), 'an id of null').toContain('"error"')
    const wrongVersion = await post('tools/call', call, {}, { jsonrpc: '1.0' })
    expect(JSON.stringify(await wrongVersion.json()), 'jsonrpc 1.0').toContain('"error"')
    const noEnvelope = await post('tools/call', { name: 'read_file' })
    expect(JSON.stringify(await noEnvelope.json()), 'no envelope').toContain('"error"')
    // A well-formed one the direct path does not take (a log level in the envelope): the SDK answers it.
    const logged = await post('tools/call', {
      ...call,
      _meta: { ...envelope(), 'io.modelcontextprotocol/logLevel': 'error' },
    })
    expect((await logged.json()).result.structuredContent.content).toBe('one\ntwo\n')
  })

  it('keeps serving 2025-11-25 clients on the same endpoint', async () => {
    const response = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'old', version: '1' } },
      }),
    })
    expect((await response.json()).result.protocolVersion).toBe('2025-11-25')
  })
})
