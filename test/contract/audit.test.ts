import { execFile } from 'node:child_process'
import { readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AdmittedCall } from '../../src/caller/call'
import type { LocalWeb } from '../support/local-web'
import { createCookieWalker, formAction, hiddenField, MemoryOAuthClient, signInWithKey } from '../support/oauth-client'
import { freePort } from '../support/ports'
import { startTestServer, type TestServer } from '../support/server'
import { startSourceUpstreams } from '../support/source-upstreams'
import { putSource } from '../support/sources-api'

// The audit log through the public interface: each kind of event made by a real call, read back with
// GET /v1/audit by the tenant's admin key (and by no other tenant's), and an edit or a removal in the
// bucket found by GET /v1/audit/verify.

const admin = 'audit-admin-key-0123456789'
const gated = 'audit-gated-key-0123456789'
const approver = 'audit-approver-key-0123456789'
const reader = 'audit-reader-key-0123456789'
const otherAdmin = 'audit-other-admin-key-0123456789'
const callback = 'http://127.0.0.1:9/callback'
let server: TestServer
let upstream: LocalWeb
let publicUrl: string

beforeAll(async () => {
  upstream = await startSourceUpstreams()
  const port = await freePort()
  publicUrl = `http://127.0.0.1:${port}`
  server = await startTestServer(
    {
      TOOLPORT_PUBLIC_URL: publicUrl,
      TOOLPORT_OAUTH_ISSUER: 'builtin',
      TOOLPORT_SIGNING_SECRET: 'audit-signing-secret-0123456789abcdef',
      TOOLPORT_APPROVAL_TTL_SECONDS: '1',
      TOOLPORT_SHELL_DENY: 'rm',
      TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${upstream.port}`,
    },
    {
      port,
      shell: true,
      fileKeys: [
        { tenant: 'acme', key: admin, admin: true },
        { tenant: 'acme', key: gated, require_approval: ['destructive'] },
        { tenant: 'acme', key: approver, approver: true },
        { tenant: 'acme', key: reader, tools: ['read_file'] },
        { tenant: 'globex', key: otherAdmin, admin: true },
      ],
    },
  )
}, 120_000)

afterAll(async () => {
  await server?.stop()
  await upstream?.stop()
})

// biome-ignore lint/suspicious/noExplicitAny: tests inspect arbitrary JSON
type Json = any

async function get(path: string, key: string): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${key}` } })
  return { status: response.status, body: await response.json() }
}

/** The tenant's records of one action, newest first, as its admin reads them. */
async function records(action: string, key = admin): Promise<Json[]> {
  const page = await get(`/v1/audit?action=${action}&limit=100`, key)
  expect(page.status, JSON.stringify(page.body)).toBe(200)
  return page.body.records
}

async function decide(id: string, decision: 'approve' | 'reject') {
  return fetch(`${server.url}/v1/approvals/${id}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${approver}`, 'content-type': 'application/json' },
    body: JSON.stringify({ decision }),
  })
}

const sourceManifest = {
  id: 'sheets',
  url: '',
  rpc: { methods: { add: { inputSchema: { type: 'object', properties: { a: { type: 'number' } } } } } },
  aiTools: [{ name: 'sheet_add', method: 'add', effect: 'read', description: 'Adds.' }],
}

describe('the audit log', () => {
  it('keeps a source created, changed, disabled, enabled and removed, with who did it and the request id', async () => {
    const manifest = { ...sourceManifest, url: `${upstream.url}/rpc` }
    expect((await putSource(server, admin, manifest)).status).toBe(201)
    expect(
      (await putSource(server, admin, { ...manifest, aiTools: [{ ...manifest.aiTools[0], description: 'Adds two.' }] }))
        .status,
    ).toBe(200)
    const patch = (enabled: boolean) =>
      fetch(`${server.url}/v1/sources/sheets`, {
        method: 'PATCH',
        headers: {
          authorization: `Bearer ${admin}`,
          'content-type': 'application/json',
          'x-request-id': `patch-${enabled}`,
        },
        body: JSON.stringify({ enabled }),
      })
    expect((await patch(false)).status).toBe(200)
    expect((await patch(true)).status).toBe(200)
    const removed = await fetch(`${server.url}/v1/sources/sheets`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${admin}` },
    })
    expect(removed.status).toBe(204)
    for (const action of ['source.created', 'source.changed', 'source.disabled', 'source.enabled', 'source.removed']) {
      const [record] = await records(action)
      expect(record, action).toMatchObject({ tenant: 'acme', action, target: 'sheets', outcome: 'success' })
      expect(record.principal).toMatch(/^key-\d+$/)
      expect(record.principal).not.toContain(admin)
    }
    expect((await records('source.disabled'))[0].request_id).toBe('patch-false')
  })

  it('keeps a non-admin key’s attempt to change the sources as a refused call', async () => {
    const refused = await putSource(server, reader, { ...sourceManifest, url: `${upstream.url}/rpc` })
    expect(refused.status).toBe(403)
    const [record] = await records('call.refused')
    expect(record).toMatchObject({
      target: '/v1/sources/sheets',
      outcome: 'refused',
      details: { reason: 'admin', method: 'PUT' },
    })
  })

  it('keeps an approval requested, approved and rejected, each with the trace id of the call that asked', async () => {
    const traceId = 'ab'.repeat(16)
    const traceparent = `00-${traceId}-${'12'.repeat(8)}-01`
    await server.call('write_file', { path: 'approve-me.txt', content: 'x' }, { key: admin })
    await server.call('write_file', { path: 'reject-me.txt', content: 'x' }, { key: admin })
    const asked = await server.call('delete_file', { path: 'approve-me.txt' }, { key: gated, headers: { traceparent } })
    expect(asked.status, JSON.stringify(asked.body)).toBe(202)
    const other = await server.call('delete_file', { path: 'reject-me.txt' }, { key: gated })
    expect(other.status).toBe(202)
    expect((await decide(asked.body.approval_id, 'approve')).status).toBe(200)
    expect((await decide(other.body.approval_id, 'reject')).status).toBe(200)
    const requested = await records('approval.requested')
    expect(requested.find((record: Json) => record.target === asked.body.approval_id)).toMatchObject({
      outcome: 'success',
      trace_id: traceId,
      details: { tool: 'delete_file', effect: 'destructive' },
    })
    // The call's input stays out unless the operator opts in (TOOLPORT_AUDIT_INPUTS).
    expect(JSON.stringify(requested)).not.toContain('approve-me.txt')
    const [approved] = await records('approval.approved')
    expect(approved).toMatchObject({
      target: asked.body.approval_id,
      trace_id: traceId,
      details: { tool: 'delete_file' },
    })
    expect(approved.principal).not.toBe(approved.details.asked_by)
    const [rejected] = await records('approval.rejected')
    expect(rejected).toMatchObject({ target: other.body.approval_id, outcome: 'success' })
  })

  it('keeps an approval that expired before anyone decided it', async () => {
    await server.call('write_file', { path: 'expire-me.txt', content: 'x' }, { key: admin })
    const asked = await server.call('delete_file', { path: 'expire-me.txt' }, { key: gated })
    expect(asked.status).toBe(202)
    await new Promise((resolve) => setTimeout(resolve, 1_300))
    // The approvers' list is where a pending call is found expired (and removed).
    expect((await get('/v1/approvals', approver)).status).toBe(200)
    const [expired] = await records('approval.expired')
    expect(expired).toMatchObject({ target: asked.body.approval_id, principal: 'system', outcome: 'expired' })
  })

  it('keeps calls refused for scope (REST and MCP), for want of an approval, and by the command policy', async () => {
    expect((await server.call('write_file', { path: 'a.txt', content: 'x' }, { key: reader })).status).toBe(403)
    const client = new Client({ name: 'audit-test', version: '1.0.0' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${reader}` } },
      }),
    )
    const mcp = await client.callTool({ name: 'delete_file', arguments: { path: 'a.txt' } })
    expect(mcp.isError).toBe(true)
    await client.close()
    const scope = (await records('call.refused')).filter((record: Json) => record.details.reason === 'scope')
    expect(scope.map((record: Json) => record.target)).toEqual(expect.arrayContaining(['write_file', 'delete_file']))

    // A call that skipped admission (no transport can send one; the caller refuses it all the same).
    const prepared = await server.caller.prepare({
      principal: {
        id: 'key-2',
        tenant: 'acme',
        tools: undefined,
        egress: undefined,
        requireApproval: new Set(['destructive']),
        approver: false,
      },
      tool: 'delete_file',
      readInput: () => ({ path: 'nothing.txt' }),
      workspaceId: 'default',
      origin: undefined,
    })
    await expect(server.caller.run(prepared as AdmittedCall)).rejects.toThrow(/needs an approval/)
    const approval = (await records('call.refused')).find((record: Json) => record.details.reason === 'approval')
    expect(approval).toMatchObject({ target: 'delete_file', outcome: 'refused' })

    const denied = await server.call('execute_command', { command: 'rm -rf notes' }, { key: admin })
    expect(denied.status, JSON.stringify(denied.body)).toBe(403)
    const policy = (await records('call.refused')).find((record: Json) => record.details.reason === 'policy')
    expect(policy).toMatchObject({ target: 'execute_command', details: { refused: 'rm', tool: 'execute_command' } })
  })

  it('keeps outbound connections refused by the address rules, and a browser page refused', async () => {
    const fetched = await server.call('http_fetch', { url: 'http://169.254.169.254/latest/meta-data/' }, { key: admin })
    expect(fetched.status).toBe(403)
    const [egress] = await records('egress.refused')
    expect(egress).toMatchObject({ outcome: 'refused', details: { tool: 'http_fetch', reason: 'connection' } })
    expect(egress.target).toContain('169.254.169.254')
    const opened = await server.call('browser_open', { url: 'http://10.1.2.3/' }, { key: admin })
    expect(opened.status, JSON.stringify(opened.body)).toBe(403)
    const [page] = await records('page.refused')
    expect(page).toMatchObject({ outcome: 'refused', details: { tool: 'browser_open' } })
    expect(page.target).toContain('10.1.2.3')
  })

  it('keeps sign-ins and refused sign-ins of the authorization server', async () => {
    const oauth = new MemoryOAuthClient(callback)
    await expect(
      new Client({ name: 'audit-test', version: '1.0.0' }).connect(
        new StreamableHTTPClientTransport(new URL(`${publicUrl}/mcp`), { authProvider: oauth }),
      ),
    ).rejects.toThrow(UnauthorizedError)
    const authorizationUrl = oauth.authorizationUrl as URL
    // A wrong key first: refused, and kept where the operator reads what belongs to no tenant.
    const browser = createCookieWalker()
    const page = await browser.follow(authorizationUrl, callback)
    const html = page.html ?? ''
    const wrong = await browser.follow(formAction({ url: page.url, html }), callback, {
      method: 'POST',
      form: { csrf: hiddenField(html, 'csrf'), key: 'not-a-key-0123456789' },
    })
    expect(wrong.html).toContain('That key is not valid')
    await signInWithKey(authorizationUrl, admin, callback)
    const [signedIn] = await records('auth.signed_in')
    expect(signedIn).toMatchObject({ tenant: 'acme', outcome: 'success', details: { method: 'key' } })
    expect(signedIn.target).toBe((await oauth.clientInformation())?.client_id)
    const service = await server.audit?.page('_service', { limit: 50, filter: { action: 'auth.sign_in_refused' } })
    expect(service?.records[0]).toMatchObject({ principal: 'unknown', outcome: 'refused' })
    expect(JSON.stringify(service)).not.toContain('not-a-key-0123456789')
  })

  it('keeps keys refused at the door, without the key, where the operator reads them with toolport audit', async () => {
    const refused = await server.call('read_file', { path: 'x' }, { key: 'wrong-key-0123456789' })
    expect(refused.status).toBe(401)
    // No key reads what belongs to no tenant; the operator's command reads the bucket.
    const cli = (args: string[]) =>
      promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'audit', ...args], {
        env: { ...process.env, TOOLPORT_DATA_DIR: join(server.dataDir, 'data') },
      })
    const listed = JSON.parse((await cli(['_service', '--action', 'auth.refused'])).stdout)
    expect(listed.records[0]).toMatchObject({
      target: 'POST /v1/tools/read_file',
      outcome: 'refused',
      principal: 'unknown',
    })
    expect(JSON.stringify(listed)).not.toContain('wrong-key-0123456789')
    const verified = JSON.parse((await cli(['_service', '--verify'])).stdout)
    expect(verified).toMatchObject({ tenant: '_service', ok: true })
    expect(verified.records).toBeGreaterThanOrEqual(2)
  })

  it('shows a tenant’s admin its own records only, and no one else', async () => {
    const own = await get('/v1/audit?limit=1000', otherAdmin)
    expect(own.status).toBe(200)
    expect(own.body.records).toEqual([])
    expect((await get('/v1/audit', reader)).status).toBe(403)
    expect((await get('/v1/audit?tenant=acme', otherAdmin)).status).toBe(400)
    const acme = await get('/v1/audit?limit=1000', admin)
    expect(acme.body.records.length).toBeGreaterThan(10)
    expect(acme.body.records.every((record: Json) => record.tenant === 'acme')).toBe(true)
  })

  it('pages oldest first with after= and newest first with before=, without a record twice', async () => {
    const all: Json[] = []
    let next = 'after=0'
    for (let step = 0; step < 100 && next; step++) {
      const page = await get(`/v1/audit?limit=3&${next}`, admin)
      expect(page.status).toBe(200)
      all.push(...page.body.records)
      next = page.body.next
    }
    const seqs = all.map((record) => record.seq)
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, index) => index + 1))
    const newest = await get('/v1/audit?limit=3', admin)
    expect(newest.body.records.map((record: Json) => record.seq)).toEqual(seqs.slice(-3).reverse())
    const older = await get(`/v1/audit?limit=3&${newest.body.next}`, admin)
    expect(older.body.records.map((record: Json) => record.seq)).toEqual(seqs.slice(-6, -3).reverse())
  })

  it('reports a record edited or removed in the bucket', async () => {
    const clean = await get('/v1/audit/verify', admin)
    expect(clean.body).toMatchObject({ tenant: 'acme', ok: true, first_seq: 1, problems: [] })
    const folder = join(server.dataDir, 'data', 'audit', 'acme')
    const files = (await readdir(folder)).filter((name) => /^\d{12}\.json$/.test(name)).sort()
    expect(files.length).toBe(clean.body.records)
    // An approver's decision rewritten as someone else's, and another record removed.
    const edited = join(folder, files[2] as string)
    const record = JSON.parse(await readFile(edited, 'utf8'))
    await writeFile(edited, JSON.stringify({ ...record, principal: 'key-99' }))
    await rm(join(folder, files[4] as string))
    const broken = await get('/v1/audit/verify', admin)
    expect(broken.body.ok).toBe(false)
    expect(broken.body.problems).toEqual([
      expect.objectContaining({ seq: 3, problem: 'edited' }),
      expect.objectContaining({ seq: 5, through: 5, problem: 'missing' }),
    ])
    // The other tenant's chain is its own.
    expect((await get('/v1/audit/verify', otherAdmin)).body).toMatchObject({ tenant: 'globex', ok: true })
    // The operator's command finds the same, and says so by its exit status.
    const cli = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'audit', 'acme', '--verify'],
      {
        env: { ...process.env, TOOLPORT_DATA_DIR: join(server.dataDir, 'data') },
      },
    ).catch((error: { code: number; stdout: string }) => error)
    expect(cli).toMatchObject({ code: 1 })
    expect(JSON.parse((cli as { stdout: string }).stdout).problems).toEqual(broken.body.problems)
  })

  it('refuses a query it does not know, and bad filters, with a problem', async () => {
    const unknown = await get('/v1/audit?actor=key-1', admin)
    expect(unknown.status).toBe(400)
    const both = await get('/v1/audit?after=1&before=5', admin)
    expect(both.status).toBe(400)
    expect(both.body.hint).toBeTruthy()
    expect((await get('/v1/audit?action=source.exploded', admin)).status).toBe(400)
    expect((await get('/v1/audit?limit=100000', admin)).status).toBe(400)
  })
})
