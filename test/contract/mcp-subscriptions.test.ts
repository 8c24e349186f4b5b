import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestServer } from '../support/server'

// Resource subscriptions of 2025 clients: the session initialize opens, kept in the bucket, and its
// GET stream telling of changes, whichever instance of the fleet serves what.
const adminKey = 'subs-admin-key-0123456789'
const otherKey = 'subs-other-key-0123456789'
const listerKey = 'subs-lister-key-0123456789'
const strangerKey = 'subs-stranger-key-0123456789'

let first: TestServer
let second: TestServer
const clients: Client[] = []

beforeAll(async () => {
  const env = { TOOLPORT_API_KEYS: `acme=${adminKey},beta=${strangerKey}` }
  const fileKeys = [
    { tenant: 'acme', key: otherKey },
    { tenant: 'acme', key: listerKey, tools: ['list_files'] },
  ]
  first = await startTestServer(env, { fileKeys })
  // A second instance on the same bucket: a session opened on one is served by the other.
  second = await startTestServer(env, { fileKeys, storage: first.storage })
})
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => {})))
  await first?.stop()
  await second?.stop()
})

interface Connected {
  client: Client
  transport: StreamableHTTPClientTransport
  updates: string[]
}

async function connect(server: TestServer, key: string): Promise<Connected> {
  const client = new Client({ name: 'subs-test', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp?workspace=subs`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  })
  const updates: string[] = []
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
    updates.push(notification.params.uri)
  })
  await client.connect(transport)
  clients.push(client)
  return { client, transport, updates }
}

const uriOf = (path: string) => `toolport://workspace/subs/${path}`

async function write(server: TestServer, path: string, content: string): Promise<void> {
  const result = await server.call('write_file', { path, content }, { key: adminKey, workspace: 'subs' })
  expect(result.status).toBe(200)
}

/** Waits until `check` holds (a guard against a hang, not a speed goal: the stream polls every 2 s). */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

function rawSession(server: TestServer, key: string, sessionId: string, method: 'GET' | 'DELETE', accept?: string) {
  return fetch(`${server.url}/mcp?workspace=subs`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      'mcp-session-id': sessionId,
      'mcp-protocol-version': '2025-11-25',
      accept: accept ?? 'text/event-stream',
    },
  })
}

describe('MCP resource subscriptions (2025 sessions)', () => {
  it('declares resources.subscribe and answers initialize with a session id', async () => {
    const { client, transport } = await connect(first, adminKey)
    expect(client.getServerCapabilities()?.resources).toMatchObject({ subscribe: true })
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('tells the subscribed client of a change made on another instance, and no longer once it unsubscribed', async () => {
    await write(first, 'watched/a.txt', 'one')
    const { client, updates } = await connect(first, adminKey)
    await client.subscribeResource({ uri: uriOf('watched/a.txt') })
    // A file that is not there yet may be subscribed to: its creation is a change.
    await client.subscribeResource({ uri: uriOf('watched/later.txt') })
    await write(second, 'watched/a.txt', 'two')
    await until(() => updates.includes(uriOf('watched/a.txt')), 'the update of a.txt')
    await write(second, 'watched/later.txt', 'here now')
    await until(() => updates.includes(uriOf('watched/later.txt')), 'the creation of later.txt')
    expect(updates.filter((uri) => uri === uriOf('watched/a.txt'))).toHaveLength(1)
    // Unsubscribed from a.txt: its next change is not told, though later.txt's change after it is.
    await client.unsubscribeResource({ uri: uriOf('watched/a.txt') })
    await write(first, 'watched/a.txt', 'three')
    await write(first, 'watched/later.txt', 'changed')
    await until(() => updates.filter((uri) => uri === uriOf('watched/later.txt')).length === 2, 'the second change')
    expect(updates.filter((uri) => uri === uriOf('watched/a.txt'))).toHaveLength(1)
    // What the client is told, it may read.
    const read = await client.readResource({ uri: uriOf('watched/later.txt') })
    expect(read.contents[0]).toMatchObject({ text: 'changed' })
  })

  it('tells a change once per session, though two instances serve a stream of it', async () => {
    await write(first, 'once.txt', 'one')
    const { client, transport, updates } = await connect(first, adminKey)
    await client.subscribeResource({ uri: uriOf('once.txt') })
    // A second stream of the same session, on the other instance.
    const other = await rawSession(second, adminKey, transport.sessionId as string, 'GET')
    expect(other.status).toBe(200)
    expect(other.headers.get('content-type')).toContain('text/event-stream')
    const told: string[] = []
    const reader = (other.body as ReadableStream<Uint8Array>).pipeThrough(new TextDecoderStream() as never).getReader()
    const reading = (async () => {
      for (;;) {
        const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }))
        if (done) return
        for (const line of String(value).split('\n')) if (line.startsWith('data: ')) told.push(line)
      }
    })()
    await write(second, 'once.txt', 'two')
    const count = () => told.length + updates.filter((uri) => uri === uriOf('once.txt')).length
    await until(() => count() > 0, 'a notification on one of the streams')
    // Two more rounds of both streams: neither tells it again.
    await new Promise((resolve) => setTimeout(resolve, 5_000))
    expect(count()).toBe(1)
    await reader.cancel()
    await reading
  })

  it('keeps a session to the key that opened it, and ends it with DELETE', async () => {
    const { client, transport } = await connect(first, adminKey)
    const sessionId = transport.sessionId as string
    // Another key of the same tenant, and a key of another tenant, cannot use it.
    for (const key of [otherKey, strangerKey]) {
      const stream = await rawSession(second, key, sessionId, 'GET')
      expect(stream.status).toBe(404)
      expect(await stream.json()).toMatchObject({ code: 'not_found', hint: expect.stringContaining('initialize') })
      expect((await rawSession(second, key, sessionId, 'DELETE')).status).toBe(404)
    }
    const borrowed = await fetch(`${second.url}/mcp?workspace=subs`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${otherKey}`,
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-11-25',
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: uriOf('x.txt') } }),
    })
    expect(await borrowed.json()).toMatchObject({ error: { code: -32602, message: /no such MCP session/ } })
    // A GET that is not for an event stream, and GET or DELETE without a session, are refused.
    expect((await rawSession(first, adminKey, sessionId, 'GET', 'application/json')).status).toBe(400)
    const bare = await fetch(`${first.url}/mcp`, { headers: { authorization: `Bearer ${adminKey}` } })
    expect(bare.status).toBe(405)
    expect((await rawSession(first, adminKey, 'not a session', 'GET')).status).toBe(404)
    // DELETE ends it everywhere: the other instance no longer knows it.
    expect((await rawSession(second, adminKey, sessionId, 'DELETE')).status).toBe(204)
    expect((await rawSession(first, adminKey, sessionId, 'GET')).status).toBe(404)
    await expect(client.subscribeResource({ uri: uriOf('x.txt') })).rejects.toThrow(/no such MCP session/)
  })

  it('subscribes only to what the key may read, and only in a session', async () => {
    const lister = await connect(first, listerKey)
    // list_files alone does not read files: a subscription would tell what read_file would not.
    await expect(lister.client.subscribeResource({ uri: uriOf('watched/a.txt') })).rejects.toThrow(/read_file/)
    const admin = await connect(first, adminKey)
    await expect(
      admin.client.subscribeResource({ uri: 'toolport://workspace/subs/../../etc/passwd' }),
    ).rejects.toThrow()
    await expect(admin.client.subscribeResource({ uri: 'test://no-such-source-resource' })).rejects.toThrow(
      /no resource/,
    )
    // Without the session header (a client that dropped it), the answer says what is missing.
    const sessionless = await fetch(`${first.url}/mcp?workspace=subs`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${adminKey}`,
        'mcp-protocol-version': '2025-11-25',
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: uriOf('a') } }),
    })
    expect(await sessionless.json()).toMatchObject({
      error: { code: -32602, message: /no Mcp-Session-Id/, data: { hint: /Mcp-Session-Id/ } },
    })
  })
})

describe('MCP resource subscriptions (2026-07-28 subscriptions/listen)', () => {
  async function connectModern(server: TestServer, key: string) {
    const client = new ModernClient(
      { name: 'subs-test-2026', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    )
    await client.connect(
      new ModernTransport(new URL(`${server.url}/mcp?workspace=subs`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    )
    const updates: string[] = []
    client.setNotificationHandler('notifications/resources/updated', (notification) => {
      updates.push(notification.params.uri)
    })
    return { client, updates }
  }

  it('honors the resources this key may read, and tells of their changes on the listen stream', async () => {
    await write(first, 'listen/a.txt', 'one')
    const { client, updates } = await connectModern(first, adminKey)
    expect(client.getServerCapabilities()?.resources).toMatchObject({ subscribe: true })
    const subscription = await client.listen({
      resourceSubscriptions: [uriOf('listen/a.txt'), 'test://not-a-resource-here', 'toolport://workspace/subs/../x'],
    })
    // Only what it may read is honored, and the acknowledgement says so.
    expect(subscription.honoredFilter).toEqual({ resourceSubscriptions: [uriOf('listen/a.txt')] })
    await write(second, 'listen/a.txt', 'two')
    await until(() => updates.includes(uriOf('listen/a.txt')), 'the update on the listen stream')
    await subscription.close()
    expect(await subscription.closed).toBe('local')
    await client.close()
  })

  it("never tells one tenant of another tenant's file of the same workspace and path", async () => {
    await write(first, 'listen/shared.txt', 'acme')
    const stranger = await connectModern(first, strangerKey)
    const subscription = await stranger.client.listen({ resourceSubscriptions: [uriOf('listen/shared.txt')] })
    // beta has no such file yet: the subscription waits for one to appear in beta's workspace.
    expect(subscription.honoredFilter.resourceSubscriptions).toEqual([uriOf('listen/shared.txt')])
    const acme = await connectModern(first, adminKey)
    const acmeSubscription = await acme.client.listen({ resourceSubscriptions: [uriOf('listen/shared.txt')] })
    await write(second, 'listen/shared.txt', 'acme again')
    await until(() => acme.updates.length > 0, "acme's update")
    // Two more rounds: beta's stream, watching the same URI, heard nothing of acme's file.
    await new Promise((resolve) => setTimeout(resolve, 5_000))
    expect(stranger.updates).toEqual([])
    await subscription.close()
    await acmeSubscription.close()
    await stranger.client.close()
    await acme.client.close()
  })
})
