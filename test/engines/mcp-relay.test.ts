import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestServer } from '../support/server'
import { bundleStdioFixture, type StdioFixture } from '../support/stdio-fixture'

// An MCP source's server asking its caller mid-call (elicitation, sampling), relayed through toolport:
// on 2025-11-25 as a request on the call's stream, answered by a later POST; on 2026-07-28 as an
// input_required result, the call parked until the client retries. Refused clearly to a client that
// cannot answer, and never answerable by another key.

const key = 'relay-key-0123456789abcdefgh'
const otherKey = 'relay-other-0123456789abcdef'
let server: TestServer
let fixture: StdioFixture
let sources: string

beforeAll(async () => {
  fixture = await bundleStdioFixture('mcp-conformance-server.ts')
  sources = await mkdtemp(join(tmpdir(), 'toolport-relay-'))
  await writeFile(
    join(sources, 'test.json'),
    JSON.stringify({
      id: 'test',
      kind: 'mcp',
      command: ['node', '/opt/fixture/server.mjs'],
      mounts: [{ host: fixture.folder, sandbox: '/opt/fixture' }],
      timeout_seconds: 30,
    }),
  )
  server = await startTestServer(
    { TOOLPORT_API_KEYS: `acme=${key},acme=${otherKey}`, TOOLPORT_SOURCES_DIR: sources },
    { shell: true },
  )
  for (let attempt = 0; attempt < 100; attempt++) {
    const listed = await (await fetch(`${server.url}/v1/tools`, { headers: { authorization: `Bearer ${key}` } })).json()
    if (listed.tools?.some((tool: { name: string }) => tool.name === 'test_elicitation')) return
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  throw new Error('the fixture source did not load')
}, 60_000)
afterAll(async () => {
  await server?.stop()
  await fixture?.remove()
  await rm(sources, { recursive: true, force: true })
})

const textOf = (result: object) =>
  ((result as { content?: unknown }).content as Array<{ type: string; text?: string }>)
    .map((block) => block.text ?? '')
    .join('\n')

async function modern(capabilities: Record<string, unknown>, keyUsed = key): Promise<ModernClient> {
  const client = new ModernClient({ name: 'relay-2026', version: '1.0.0' }, {
    versionNegotiation: { mode: { pin: '2026-07-28' } },
    capabilities,
  } as never)
  await client.connect(
    new ModernTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${keyUsed}` } },
    }),
  )
  return client
}

describe('2026-07-28: a source asking its client becomes input_required', () => {
  it('relays elicitation to a client that declares it, and returns what the user answered', async () => {
    const client = await modern({ elicitation: { form: {} } })
    const asked: unknown[] = []
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params)
      return { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } }
    })
    await client.listTools()
    const result = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } })
    expect(asked).toMatchObject([{ message: 'Who are you?', requestedSchema: { required: ['username', 'email'] } }])
    expect(textOf(result)).toBe('User response: action=accept, content={"username":"ada","email":"ada@example.com"}')
    await client.close()
  })

  it('relays sampling the same way', async () => {
    const client = await modern({ sampling: {} })
    client.setRequestHandler('sampling/createMessage', async () => ({
      role: 'assistant',
      content: { type: 'text', text: 'forty-two' },
      model: 'test-model',
    }))
    const result = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'The answer?' } })
    expect(textOf(result)).toBe('LLM response: forty-two')
    await client.close()
  })

  it('refuses the request, clearly, for a client that did not declare elicitation', async () => {
    const client = await modern({})
    const result = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } })
    expect(result.isError).toBe(true)
    expect(textOf(result)).toMatch(/does not support elicitation/)
    await client.close()
  })

  it('lets only the key that started a call answer it: another key gets an invalid requestState', async () => {
    const envelope = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
    }
    const post = (keyUsed: string, params: Record<string, unknown>) =>
      fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${keyUsed}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/call',
          'mcp-name': 'test_elicitation',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'test_elicitation', arguments: { message: 'hi' }, _meta: envelope, ...params },
        }),
      }).then((response) => response.json())
    const first = (await post(key, {})).result
    expect(first.resultType).toBe('input_required')
    const [inputKey] = Object.keys(first.inputRequests)
    expect(first.inputRequests[inputKey as string].method).toBe('elicitation/create')
    const answer = { [inputKey as string]: { action: 'decline' } }
    const stolen = await post(otherKey, { requestState: first.requestState, inputResponses: answer })
    expect(stolen.error).toMatchObject({ code: -32602, message: 'Invalid or expired requestState' })
    const forged = await post(key, { requestState: 'not-a-call', inputResponses: answer })
    expect(forged.error.code).toBe(-32602)
    const done = (await post(key, { requestState: first.requestState, inputResponses: answer })).result
    expect(done.content[0].text).toBe('User response: action=decline, content={}')
  })
})

describe('2025-11-25: a source asking its client is a request on the call stream', () => {
  it('relays elicitation and takes the answer from the client’s next POST', async () => {
    const client = new Client({ name: 'relay-2025', version: '1.0.0' }, { capabilities: { elicitation: {} } })
    client.setRequestHandler(ElicitRequestSchema, async () => ({
      action: 'accept',
      content: { username: 'bob', email: 'bob@example.com' },
    }))
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    )
    // Listed first: the client then holds each result to the tool's declared output schema.
    await client.listTools()
    const result = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Again?' } })
    expect(textOf(result)).toBe('User response: action=accept, content={"username":"bob","email":"bob@example.com"}')
    await client.close()
  })

  it('passes the source’s progress and log messages to the client as they come', async () => {
    const client = new Client({ name: 'relay-2025', version: '1.0.0' })
    const logged: unknown[] = []
    client.setNotificationHandler(
      (await import('@modelcontextprotocol/sdk/types.js')).LoggingMessageNotificationSchema,
      (notification) => {
        logged.push(notification.params.data)
      },
    )
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    )
    const progress: number[] = []
    await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, {
      onprogress: (update) => progress.push(update.progress),
    })
    expect(progress).toEqual([0, 50, 100])
    await client.callTool({ name: 'test_tool_with_logging', arguments: {} })
    expect(logged).toEqual(['Tool execution started', 'Tool processing data', 'Tool execution completed'])
    await client.close()
  })
})
