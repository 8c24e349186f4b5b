import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../src/app'
import { loadConfig } from '../../src/config/config'
import { signPayload } from '../../src/jobs/callback'
import { createMemoryStorage } from '../../src/storage/memory'
import { toolNames } from '../../src/tools/builtins'
import { type LocalWeb, startLocalWeb } from '../support/local-web'
import { startTestServer, type TestServer } from '../support/server'

// Reference 003's safety classes: with TOOLPORT_APPROVAL=destructive a destructive call waits for an
// approver, a read never does, and whatever is certain before anyone decides is answered at once.

const envKey = 'acme-env-key-0123456789'
const exemptKey = 'acme-exempt-key-0123456789'
const approverKey = 'acme-approver-key-0123456789'
const otherApprover = 'other-approver-key-0123456789'
const gatedKey = 'acme-gated-all-key-0123456789'

let server: TestServer
let receiver: LocalWeb
const hooks: Array<{ body: string; signature: string }> = []

// biome-ignore lint/suspicious/noExplicitAny: tests inspect arbitrary JSON
async function request(path: string, key: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : undefined }
}

async function pendingIds(): Promise<string[]> {
  return (await server.storage.list('approvals/acme/')).objects
    .map((object) => object.key)
    .filter((key) => key.endsWith('.json'))
}

beforeAll(async () => {
  receiver = await startLocalWeb({
    '/approvals': (incoming, response, body) => {
      hooks.push({ body, signature: String(incoming.headers['x-toolport-signature']) })
      response.statusCode = 204
      response.end()
    },
  })
  server = await startTestServer(
    {
      TOOLPORT_API_KEYS: `acme=${envKey}`,
      TOOLPORT_APPROVAL: 'destructive',
      TOOLPORT_APPROVAL_WEBHOOK_URL: `${receiver.url}/approvals`,
      TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${receiver.port}`,
      TOOLPORT_SIGNING_SECRET: 'approval-webhook-secret-0123456789',
      TOOLPORT_SHELL_DENY: 'rm',
      TOOLPORT_MAX_FILE_BYTES: '1024',
    },
    {
      shell: true,
      fileKeys: [
        { tenant: 'acme', key: exemptKey, require_approval: [] },
        { tenant: 'acme', key: gatedKey, require_approval: ['write', 'external', 'destructive'] },
        { tenant: 'acme', key: approverKey, approver: true },
        { tenant: 'other', key: otherApprover, approver: true },
      ],
    },
  )
  for (const path of ['keep.txt', 'folder/inner.txt', 'one.txt', 'two.txt', 'three.txt']) {
    expect((await server.call('write_file', { path, content: path }, { key: exemptKey })).status).toBe(200)
  }
}, 60_000)
afterAll(async () => {
  await server?.stop()
  await receiver?.stop()
})

describe('TOOLPORT_APPROVAL=destructive', () => {
  it('a delete_file of an ordinary (TOOLPORT_API_KEYS) key is pending, read_file runs', async () => {
    const read = await server.call('read_file', { path: 'keep.txt' }, { key: envKey })
    expect(read.status).toBe(200)
    const pending = await server.call('delete_file', { path: 'keep.txt' }, { key: envKey })
    expect(pending.status).toBe(202)
    expect(pending.body).toMatchObject({
      status: 'pending_approval',
      tool: 'delete_file',
      title: 'Delete keep.txt',
      preview: { deletes: ['keep.txt'] },
    })
    expect((await server.call('read_file', { path: 'keep.txt' }, { key: envKey })).status).toBe(200)
    const approved = await request(`/v1/approvals/${pending.body.approval_id}`, approverKey, { decision: 'approve' })
    expect(approved).toMatchObject({ status: 200, body: { path: 'keep.txt', deleted: true } })
  })

  it('a key whose own entry says require_approval: [] runs destructive calls directly; approver keys too', async () => {
    await server.call('write_file', { path: 'scratch.txt', content: 'x' }, { key: exemptKey })
    const direct = await server.call('delete_file', { path: 'scratch.txt' }, { key: exemptKey })
    expect(direct).toMatchObject({ status: 200, body: { deleted: true } })
    const approver = await server.call('delete_file', { path: 'scratch.txt' }, { key: approverKey })
    expect(approver).toMatchObject({ status: 200, body: { deleted: false } })
  })

  it('each certain refusal answers its 4xx at once and creates no approval; a no-op needs none', async () => {
    const before = await pendingIds()
    const folder = await server.call('delete_file', { path: 'folder' }, { key: envKey })
    expect(folder).toMatchObject({ status: 400, body: { code: 'validation', field: 'path' } })
    const denied = await server.call('execute_command', { command: 'rm -rf one.txt' }, { key: envKey })
    expect(denied).toMatchObject({ status: 403, body: { code: 'permission_denied', program: 'rm' } })
    expect(denied.body.hint).not.toMatch(/allowed: .*rm/)
    const missingFolder = await server.call(
      'execute_command',
      { command: 'ls', working_directory: 'nowhere' },
      { key: envKey },
    )
    expect(missingFolder).toMatchObject({ status: 400, body: { field: 'working_directory' } })
    const blocked = await server.call('http_fetch', { url: 'http://127.0.0.1:9/admin' }, { key: gatedKey })
    expect(blocked).toMatchObject({ status: 403, body: { code: 'permission_denied' } })
    const tooLarge = await server.call('write_file', { path: 'big.txt', content: 'x'.repeat(2000) }, { key: gatedKey })
    expect(tooLarge).toMatchObject({ status: 413, body: { code: 'size_exceeded' } })
    const overFolder = await server.call('write_file', { path: 'folder', content: 'x' }, { key: gatedKey })
    expect(overFolder).toMatchObject({ status: 409, body: { code: 'conflict' } })
    const sameContent = await server.call('write_file', { path: 'one.txt', content: 'one.txt' }, { key: gatedKey })
    expect(sameContent).toMatchObject({ status: 200, body: { path: 'one.txt' } })
    const noop = await server.call('delete_file', { path: 'never-there.txt' }, { key: envKey })
    expect(noop).toMatchObject({ status: 200, body: { path: 'never-there.txt', deleted: false } })
    expect(await pendingIds()).toEqual(before)
    expect((await server.call('read_file', { path: 'one.txt' }, { key: envKey })).status).toBe(200)
  })

  it('the inbox lists pending calls newest first, pages, and shows each card to approvers of the tenant only', async () => {
    const asked: string[] = []
    for (const path of ['one.txt', 'two.txt', 'three.txt']) {
      const pending = await server.call('delete_file', { path }, { key: envKey })
      expect(pending.status).toBe(202)
      asked.push(pending.body.approval_id)
      // Ids order by creation time in milliseconds.
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    const first = await request('/v1/approvals?limit=2', approverKey)
    expect(first.status).toBe(200)
    expect(first.body.approvals.map((card: { approval_id: string }) => card.approval_id)).toEqual([asked[2], asked[1]])
    expect(first.body.next_cursor).toBeTypeOf('string')
    const second = await request(`/v1/approvals?limit=2&cursor=${first.body.next_cursor}`, approverKey)
    expect(second.body.approvals.map((card: { approval_id: string }) => card.approval_id)).toEqual([asked[0]])
    expect(second.body.next_cursor).toBeUndefined()

    const card = await request(`/v1/approvals/${asked[0]}`, approverKey)
    expect(card.status).toBe(200)
    expect(card.body).toMatchObject({
      approval_id: asked[0],
      status: 'pending',
      title: 'Delete one.txt',
      tool: 'delete_file',
      effect: 'destructive',
      workspace: 'default',
      input: { path: 'one.txt' },
      preview: { deletes: ['one.txt'] },
      requested_by: 'key-1',
      approve_url: `${server.url}/v1/approvals/${asked[0]}`,
    })
    expect(Date.parse(card.body.expires_at)).toBeGreaterThan(Date.now())

    expect((await request('/v1/approvals', envKey)).status).toBe(403)
    expect((await request(`/v1/approvals/${asked[0]}`, envKey)).status).toBe(403)
    expect((await request(`/v1/approvals/${asked[0]}`, otherApprover)).status).toBe(404)
    expect((await request('/v1/approvals', otherApprover)).body.approvals).toEqual([])
    expect((await request('/v1/approvals?limit=0', approverKey)).status).toBe(400)

    for (const id of asked) await request(`/v1/approvals/${id}`, approverKey, { decision: 'reject' })
    expect((await request('/v1/approvals', approverKey)).body.approvals).toEqual([])
  })

  it('posts each new approval to the webhook, signed like job callbacks', async () => {
    const pending = await server.call('delete_file', { path: 'two.txt' }, { key: envKey })
    expect(pending.status).toBe(202)
    const deadline = Date.now() + 20_000
    let hook: (typeof hooks)[number] | undefined
    while (!hook && Date.now() < deadline) {
      hook = hooks.find((entry) => entry.body.includes(pending.body.approval_id))
      if (!hook) await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(hook).toBeDefined()
    const payload = JSON.parse(hook?.body ?? '{}')
    expect(payload).toMatchObject({
      event: 'approval.created',
      approval: { approval_id: pending.body.approval_id, tool: 'delete_file', input: { path: 'two.txt' } },
    })
    const timestamp = Number(/t=(\d+)/.exec(hook?.signature ?? '')?.[1])
    expect(hook?.signature).toBe(await signPayload('approval-webhook-secret-0123456789', timestamp, hook?.body ?? ''))
    await request(`/v1/approvals/${pending.body.approval_id}`, approverKey, { decision: 'reject' })
  })

  it('over MCP a gated call answers the pending approval as a normal result, and the listing stays truthful', async () => {
    const client = new Client({ name: 'toolport-test', version: '1.0.0' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${envKey}` } },
      }),
    )
    try {
      const { tools } = await client.listTools()
      const remove = tools.find((tool) => tool.name === 'delete_file')
      expect(remove?.annotations).toMatchObject({ destructiveHint: true, readOnlyHint: false })
      const read = tools.find((tool) => tool.name === 'read_file')
      expect(read?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false })
      // The SDK client checks structuredContent against the listed output schema.
      const result = await client.callTool({ name: 'delete_file', arguments: { path: 'three.txt' } })
      expect(result.isError).toBeFalsy()
      expect(result.structuredContent).toMatchObject({ status: 'pending_approval', tool: 'delete_file' })
      const text = (result.content as Array<{ type: string; text: string }>)[0]?.text ?? ''
      expect(text).toContain('waits for an approver')
      expect(text).toContain('/v1/approvals/')
      const id = (result.structuredContent as { approval_id: string }).approval_id
      expect((await request(`/v1/approvals/${id}`, approverKey)).body.input).toEqual({ path: 'three.txt' })
      const readResult = await client.callTool({ name: 'read_file', arguments: { path: 'three.txt' } })
      expect(readResult.isError).toBeFalsy()
      await request(`/v1/approvals/${id}`, approverKey, { decision: 'reject' })
    } finally {
      await client.close()
    }
  })
})

describe('start-up', () => {
  it('warns when keys need approval and their tenant has no approver key', () => {
    const warnings: Array<{ message: string; fields?: Record<string, unknown> }> = []
    const log = {
      info() {},
      error() {},
      warn: (message: string, fields?: Record<string, unknown>) => warnings.push({ message, fields }),
    }
    const config = loadConfig(
      {
        TOOLPORT_API_KEYS: 'acme=acme-lonely-key-0123456789',
        TOOLPORT_APPROVAL: 'destructive',
        TOOLPORT_SIGNING_SECRET: 's'.repeat(32),
      },
      { toolNames },
    )
    createApp({ config, storage: createMemoryStorage(), log, sources: false })
    const warning = warnings.find((entry) => entry.message.includes('approver'))
    expect(warning?.message).toContain('can only expire')
    expect(warning?.fields).toMatchObject({ tenants: ['acme'] })
    expect(() => loadConfig({ TOOLPORT_APPROVAL: 'read' }, { toolNames })).toThrow(/TOOLPORT_APPROVAL/)
  })
})

describe('TOOLPORT_APPROVAL=write with a tenant quota', () => {
  it('a write past the quota is 413 at once, with no approval created', async () => {
    const key = 'quota-gated-key-0123456789'
    const quoted = await startTestServer({
      TOOLPORT_API_KEYS: `acme=${key}`,
      TOOLPORT_APPROVAL: 'write',
      TOOLPORT_TENANT_QUOTA_BYTES: '100',
    })
    try {
      const over = await quoted.call('write_file', { path: 'big.txt', content: 'x'.repeat(200) }, { key })
      expect(over).toMatchObject({ status: 413, body: { code: 'size_exceeded' } })
      const within = await quoted.call('write_file', { path: 'small.txt', content: 'x'.repeat(50) }, { key })
      expect(within.status).toBe(202)
      const stored = (await quoted.storage.list('approvals/acme/')).objects.filter((object) =>
        object.key.endsWith('.json'),
      )
      expect(stored).toHaveLength(1)
    } finally {
      await quoted.stop()
    }
  })
})
