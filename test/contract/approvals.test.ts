import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AdmittedCall } from '../../src/caller/call'
import type { ObjectStore } from '../../src/storage/store'
import { startTestServer, type TestServer } from '../support/server'

const guardedKey = 'acme-guarded-key-0123456789'
const directKey = 'acme-direct-key-0123456789'
const otherKey = 'other-tenant-key-0123456789'
const scopedKey = 'acme-scoped-key-0123456789'
const approverKey = 'acme-approver-key-0123456789'
const otherApproverKey = 'other-approver-key-0123456789'

const fileKeys = [
  { tenant: 'acme', key: guardedKey, require_approval: ['write' as const, 'destructive' as const] },
  { tenant: 'acme', key: directKey },
  { tenant: 'other', key: otherKey, require_approval: ['write' as const] },
  { tenant: 'acme', key: scopedKey, tools: ['read_file'], require_approval: ['write' as const] },
  { tenant: 'acme', key: approverKey, tools: ['read_file'], approver: true },
  { tenant: 'other', key: otherApproverKey, approver: true },
]

// biome-ignore lint/suspicious/noExplicitAny: tests inspect arbitrary JSON
async function post(url: string, key: string, body: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  })
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : undefined }
}

/** Every stored object with its etag: equal snapshots mean nothing changed. */
async function snapshot(storage: ObjectStore): Promise<Record<string, string>> {
  const entries: Record<string, string> = {}
  let cursor: string | undefined
  do {
    const page = await storage.list('', cursor ? { cursor } : {})
    // The audit log and usage record that a decision happened; the data is what must not change.
    for (const object of page.objects) {
      if (!object.key.startsWith('audit/') && !object.key.startsWith('usage/')) entries[object.key] = object.etag
    }
    cursor = page.cursor
  } while (cursor)
  return entries
}

async function approvalKeys(storage: ObjectStore): Promise<string[]> {
  return (await storage.list('approvals/')).objects.map((object) => object.key)
}

describe('approvals and dry runs', () => {
  let server: TestServer
  const tool = (name: string, query = '') => `${server.url}/v1/tools/${name}${query}`
  const readText = async (path: string) =>
    (await server.call('read_file', { path }, { key: directKey })).body.content as string

  beforeAll(async () => {
    server = await startTestServer({}, { fileKeys })
    const seeded = await server.call(
      'write_file',
      { path: 'notes.txt', content: 'one\ntwo\nthree\n' },
      { key: directKey },
    )
    expect(seeded.status).toBe(200)
  })
  afterAll(async () => {
    await server.stop()
  })

  it('keys without require_approval run directly', async () => {
    const response = await server.call('write_file', { path: 'direct.txt', content: 'now' }, { key: directKey })
    expect(response.status).toBe(200)
    expect(response.body).toMatchObject({ path: 'direct.txt', created: true })
    expect(await readText('direct.txt')).toBe('now')
  })

  it('pending → approve runs the call once and returns its output', async () => {
    const pending = await post(tool('apply_edit'), guardedKey, { path: 'notes.txt', old_text: 'two', new_text: 'TWO' })
    expect(pending.status).toBe(202)
    expect(pending.body).toMatchObject({
      status: 'pending_approval',
      title: 'Edit notes.txt',
      tool: 'apply_edit',
      approve_url: `${server.url}/v1/approvals/${pending.body.approval_id}`,
    })
    expect(pending.body.preview).toContain('-two\n+TWO')
    expect(Date.parse(pending.body.expires_at)).toBeGreaterThan(Date.now())
    const stored = await approvalKeys(server.storage)
    expect(stored).toContain(`approvals/acme/${pending.body.approval_id}.json`)
    expect(await readText('notes.txt')).toBe('one\ntwo\nthree\n')

    const approved = await post(pending.body.approve_url, approverKey, { decision: 'approve' })
    expect(approved.status).toBe(200)
    expect(approved.body).toMatchObject({ path: 'notes.txt', line: 2 })
    expect(await readText('notes.txt')).toBe('one\nTWO\nthree\n')

    const again = await post(pending.body.approve_url, approverKey, { decision: 'approve' })
    expect(again.status).toBe(404)
    expect(again.body.code).toBe('not_found')
    expect(await approvalKeys(server.storage)).not.toContain(`approvals/acme/${pending.body.approval_id}.json`)
  })

  it('concurrent decisions run the call once: one answers with the result, the others 404', async () => {
    expect(
      (await server.call('write_file', { path: 'counter.txt', content: 'count\n' }, { key: directKey })).status,
    ).toBe(200)
    // Each run turns the one "count" into "count+", so a second run would leave "count++".
    const pending = await post(tool('apply_edit'), guardedKey, {
      path: 'counter.txt',
      old_text: 'count',
      new_text: 'count+',
    })
    expect(pending.status).toBe(202)
    const decisions = await Promise.all(
      Array.from({ length: 8 }, () => post(pending.body.approve_url, approverKey, { decision: 'approve' })),
    )
    expect(decisions.map((decision) => decision.status).sort()).toEqual([200, 404, 404, 404, 404, 404, 404, 404])
    expect(await readText('counter.txt')).toBe('count+\n')
    expect((await approvalKeys(server.storage)).filter((key) => key.includes(pending.body.approval_id))).toEqual([])
  })

  it('pending → approve of a new file writes it', async () => {
    const pending = await post(tool('write_file'), guardedKey, { path: 'new/file.txt', content: 'hello\n' })
    expect(pending.status).toBe(202)
    expect(pending.body.title).toBe('Write new/file.txt')
    expect(pending.body.preview).toContain('+hello')
    // The approver's own tool list (read_file only) does not matter: the call runs with the asker's scope.
    const approved = await post(pending.body.approve_url, approverKey, { decision: 'approve' })
    expect(approved.status).toBe(200)
    expect(approved.body).toMatchObject({ path: 'new/file.txt', created: true })
    expect(await readText('new/file.txt')).toBe('hello\n')
  })

  it('pending → reject writes nothing', async () => {
    const before = await snapshot(server.storage)
    const pending = await post(tool('delete_file'), guardedKey, { path: 'notes.txt' })
    expect(pending.status).toBe(202)
    expect(pending.body).toMatchObject({ title: 'Delete notes.txt', preview: { deletes: ['notes.txt'] } })
    const rejected = await post(pending.body.approve_url, approverKey, { decision: 'reject' })
    expect(rejected.status).toBe(200)
    expect(rejected.body.status).toBe('rejected')
    expect(await snapshot(server.storage)).toEqual(before)
    expect((await post(pending.body.approve_url, approverKey, { decision: 'approve' })).status).toBe(404)
  })

  it('only an approver key decides: the key that asked cannot approve its own call, nor can any other key', async () => {
    const pending = await post(tool('write_file'), guardedKey, { path: 'self.txt', content: 'self' })
    expect(pending.status).toBe(202)
    for (const key of [guardedKey, directKey, scopedKey]) {
      for (const decision of ['approve', 'reject']) {
        const refused = await post(pending.body.approve_url, key, { decision })
        expect(refused.status, `${key} ${decision}`).toBe(403)
        expect(refused.body).toMatchObject({ code: 'permission_denied' })
        expect(refused.body.hint).toMatch(/approver/)
      }
    }
    // A key that may not decide learns nothing: an unknown id answers the same 403.
    const unknown = await post(`${server.url}/v1/approvals/00000000-0000-0000-0000-000000000000`, guardedKey, {
      decision: 'approve',
    })
    expect(unknown.status).toBe(403)
    expect((await server.call('read_file', { path: 'self.txt' }, { key: directKey })).status).toBe(404)
    expect(await approvalKeys(server.storage)).toContain(`approvals/acme/${pending.body.approval_id}.json`)
    expect((await post(pending.body.approve_url, approverKey, { decision: 'approve' })).status).toBe(200)
    expect(await readText('self.txt')).toBe('self')
  })

  it('another tenant cannot see or decide the approval', async () => {
    const pending = await post(tool('write_file'), guardedKey, { path: 'x.txt', content: 'x' })
    expect(pending.status).toBe(202)
    const foreign = await post(pending.body.approve_url, otherApproverKey, { decision: 'approve' })
    expect(foreign.status).toBe(404)
    expect((await server.call('read_file', { path: 'x.txt' }, { key: directKey })).status).toBe(404)
    expect((await post(pending.body.approve_url, approverKey, { decision: 'reject' })).status).toBe(200)
  })

  it('an invalid decision or id is refused', async () => {
    expect(
      (
        await post(`${server.url}/v1/approvals/00000000-0000-0000-0000-000000000000`, approverKey, {
          decision: 'approve',
        })
      ).status,
    ).toBe(404)
    const pending = await post(tool('write_file'), guardedKey, { path: 'y.txt', content: 'y' })
    expect((await post(pending.body.approve_url, approverKey, { decision: 'maybe' })).status).toBe(400)
    expect((await post(pending.body.approve_url, approverKey, { decision: 'reject' })).status).toBe(200)
  })

  it('refusals known up front are answered at once, without a pending record', async () => {
    const before = await approvalKeys(server.storage)
    const missing = await post(tool('apply_edit'), guardedKey, { path: 'absent.txt', old_text: 'a', new_text: 'b' })
    expect(missing.status).toBe(404)
    expect(missing.body.code).toBe('not_found')
    const absentText = await post(tool('apply_edit'), guardedKey, { path: 'notes.txt', old_text: 'zzz', new_text: 'b' })
    expect(absentText.status).toBe(404)
    const badPath = await post(tool('write_file'), guardedKey, { path: '../escape.txt', content: 'x' })
    expect(badPath.status).toBe(400)
    const notAllowed = await post(tool('write_file'), scopedKey, { path: 'scoped.txt', content: 'x' })
    expect(notAllowed.status).toBe(403)
    expect(await approvalKeys(server.storage)).toEqual(before)
  })

  it('read tools are not gated, and the caller refuses to run a gated call that skipped admission', async () => {
    const read = await server.call('read_file', { path: 'notes.txt' }, { key: guardedKey })
    expect(read.status).toBe(200)
    const prepared = await server.caller.prepare({
      principal: {
        id: 'key-1',
        tenant: 'acme',
        tools: undefined,
        egress: undefined,
        requireApproval: new Set(['write']),
        approver: false,
      },
      tool: 'write_file',
      readInput: () => ({ path: 'skip.txt', mode: 'write', content: 'x' }),
      workspaceId: 'default',
      origin: undefined,
    })
    expect(prepared.needsApproval).toBe(true)
    // A transport that cast its way past admit (the types forbid it) is still refused.
    const call = server.caller.run(prepared as AdmittedCall)
    await expect(call).rejects.toMatchObject({ code: 'permission_denied' })
    expect((await server.call('read_file', { path: 'skip.txt' }, { key: directKey })).status).toBe(404)
  })

  it('?dry_run=true previews write_file, apply_edit and multi_edit as unified diffs and changes nothing', async () => {
    const before = await snapshot(server.storage)
    const write = await post(tool('write_file', '?dry_run=true'), directKey, { path: 'notes.txt', content: 'fresh\n' })
    expect(write.status).toBe(200)
    expect(write.body.dry_run).toBe(true)
    expect(write.body.preview).toContain('--- a/notes.txt')
    expect(write.body.preview).toContain('+++ b/notes.txt')
    expect(write.body.preview).toContain('+fresh')
    expect(write.body.preview).toContain('-one')

    const created = await post(tool('write_file', '?dry_run=true'), directKey, {
      path: 'brand-new.txt',
      content: 'a\n',
    })
    expect(created.body.preview).toContain('+a')

    const replace = await post(tool('write_file', '?dry_run=true'), directKey, {
      path: 'notes.txt',
      mode: 'replace',
      old_text: 'three',
      new_text: '3',
    })
    expect(replace.body.preview).toContain('-three\n+3')

    const edit = await post(tool('apply_edit', '?dry_run=true'), directKey, {
      path: 'notes.txt',
      old_text: 'one',
      new_text: 'ONE',
    })
    expect(edit.status).toBe(200)
    expect(edit.body.preview).toContain('-one\n+ONE')

    const multi = await post(tool('multi_edit', '?dry_run=true'), guardedKey, {
      path: 'notes.txt',
      edits: [
        { old_text: 'one', new_text: '1' },
        { old_text: 'three', new_text: '3' },
      ],
    })
    expect(multi.status).toBe(200)
    expect(multi.body.preview).toContain('-one')
    expect(multi.body.preview).toContain('+1')
    expect(multi.body.preview).toContain('+3')

    const failing = await post(tool('multi_edit', '?dry_run=true'), directKey, {
      path: 'notes.txt',
      edits: [{ old_text: 'nope', new_text: '1' }],
    })
    expect(failing.status).toBe(404)

    const remove = await post(tool('delete_file', '?dry_run=true'), directKey, { path: 'notes.txt' })
    expect(remove.body).toEqual({ dry_run: true, preview: { deletes: ['notes.txt'] } })
    const removeMissing = await post(tool('delete_file', '?dry_run=true'), directKey, { path: 'gone.txt' })
    expect(removeMissing.body).toEqual({ dry_run: true, preview: { deletes: [] } })

    expect(await snapshot(server.storage)).toEqual(before)
  })

  it('cuts a preview past 100,000 characters with truncated and a hint, as a dry run and for an approver', async () => {
    // 8,000 changed lines: a 268,000-character diff that once passed the response cap whole.
    const lines = (word: string) => Array.from({ length: 8_000 }, (_, index) => `${word} ${index}`).join('\n')
    expect(
      (await server.call('write_file', { path: 'wide.txt', content: lines('old') }, { key: directKey })).status,
    ).toBe(200)
    const before = await snapshot(server.storage)
    const change = { path: 'wide.txt', content: lines('new') }
    const dryRun = await post(tool('write_file', '?dry_run=true'), directKey, change)
    expect(dryRun.status).toBe(200)
    expect(dryRun.body).toMatchObject({ dry_run: true, truncated: true })
    expect(dryRun.body.hint).toMatch(/cut at .* characters/)
    expect(JSON.stringify(dryRun.body).length).toBeLessThan(100_000)
    expect(dryRun.body.preview).toMatch(/^=+\n--- a\/wide\.txt\n\+\+\+ b\/wide\.txt\n@@ /)
    expect(dryRun.body.preview).toContain('-old 0\n')

    const pending = await post(tool('write_file'), guardedKey, change)
    expect(pending.status).toBe(202)
    expect(pending.body).toMatchObject({ status: 'pending_approval', truncated: true })
    expect(pending.body.hint).toMatch(/cut at/)
    expect(JSON.stringify(pending.body).length).toBeLessThan(100_000)
    // The call itself is not cut: approving it writes the whole content.
    const approved = await post(`${server.url}/v1/approvals/${pending.body.approval_id}`, approverKey, {
      decision: 'approve',
    })
    expect(approved.status).toBe(200)
    expect(await readText('wide.txt')).toBe(lines('new'))
    expect(before['tenants/acme/workspaces/default/wide.txt']).toBeDefined()
  })

  it('?dry_run=true on a tool without a dry run is refused rather than run', async () => {
    const response = await post(tool('read_file', '?dry_run=true'), directKey, { path: 'notes.txt' })
    expect(response.status).toBe(400)
    expect(response.body.field).toBe('dry_run')
  })
})

describe('approval expiry', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ TOOLPORT_APPROVAL_TTL_SECONDS: '1' }, { fileKeys })
  })
  afterAll(async () => {
    await server.stop()
  })

  it('an expired approval answers 404 with a hint that it expired, and never runs', async () => {
    const pending = await post(`${server.url}/v1/tools/write_file`, guardedKey, { path: 'late.txt', content: 'x' })
    expect(pending.status).toBe(202)
    await new Promise((resolve) => setTimeout(resolve, 1_200))
    const late = await post(pending.body.approve_url, approverKey, { decision: 'approve' })
    expect(late.status).toBe(404)
    expect(late.body.code).toBe('not_found')
    expect(late.body.hint).toMatch(/expired/)
    expect((await server.call('read_file', { path: 'late.txt' }, { key: directKey })).status).toBe(404)
  })
})
