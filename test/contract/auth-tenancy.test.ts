import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestServer } from '../support/server'

const aliceKey = 'alice-key-0123456789abcdef'
const bobKey = 'bob-key-0123456789abcdef01'
const readerKey = 'reader-key-0123456789abcdef'

let server: TestServer

beforeAll(async () => {
  server = await startTestServer(
    { TOOLPORT_API_KEYS: `alice=${aliceKey},bob=${bobKey}` },
    { fileKeys: [{ tenant: 'alice', key: readerKey, tools: ['read_file', 'list_files'] }] },
  )
})
afterAll(async () => {
  await server.stop()
})

describe('bearer keys', () => {
  it('refuses calls without a key, with a malformed header, or with a wrong key: 401 problem+json', async () => {
    const attempts: Array<Record<string, string>> = [
      {},
      { authorization: aliceKey },
      { authorization: `Basic ${btoa(`alice:${aliceKey}`)}` },
      { authorization: 'Bearer ' },
      { authorization: `Bearer ${aliceKey}x` },
      { authorization: `Bearer ${aliceKey.slice(0, -1)}` },
      { authorization: `Bearer ${aliceKey.toUpperCase()}` },
      { authorization: `Bearer ${aliceKey} ${bobKey}` },
    ]
    for (const headers of attempts) {
      const result = await server.call('list_files', {}, { headers })
      expect(result.status, JSON.stringify(headers)).toBe(401)
      expect(result.body).toMatchObject({ code: 'unauthenticated', status: 401 })
      expect(result.headers.get('www-authenticate')).toContain('Bearer')
    }
    expect((await fetch(`${server.url}/v1/tools`)).status).toBe(401)
  })

  it('accepts a valid key, case-insensitive scheme', async () => {
    expect((await server.call('list_files', {}, { key: aliceKey })).status).toBe(200)
    expect((await server.call('list_files', {}, { headers: { authorization: `bearer ${bobKey}` } })).status).toBe(200)
    // A key already accepted once must not make its near misses pass (valid keys are remembered).
    expect((await server.call('list_files', {}, { key: aliceKey })).status).toBe(200)
    for (const nearMiss of [`${aliceKey}x`, aliceKey.slice(0, -1), aliceKey.toUpperCase()]) {
      expect((await server.call('list_files', {}, { key: nearMiss })).status, nearMiss).toBe(401)
    }
  })

  it('leaves health, OpenAPI and docs public', async () => {
    for (const path of ['/healthz', '/readyz', '/openapi.json', '/docs']) {
      expect((await fetch(`${server.url}${path}`)).status, path).toBe(200)
    }
  })

  it('checks the key before reading the body', async () => {
    const result = await server.call('write_file', '{not json')
    expect(result.status).toBe(401)
  })
})

describe('keys limited to some tools', () => {
  it('gets 403 permission_denied with a hint naming the tools it may use', async () => {
    const result = await server.call('write_file', { path: 'x.txt', content: 'x' }, { key: readerKey })
    expect(result.status).toBe(403)
    expect(result.body.code).toBe('permission_denied')
    expect(result.body.hint).toContain('list_files')
    expect(result.body.hint).toContain('read_file')
    expect((await server.call('list_files', {}, { key: aliceKey })).body.entries).toEqual([])
  })

  it('is refused before its body is validated, and sees only its tools in the catalog', async () => {
    expect((await server.call('delete_file', {}, { key: readerKey })).status).toBe(403)
    const catalog = await fetch(`${server.url}/v1/tools`, { headers: { authorization: `Bearer ${readerKey}` } }).then(
      (r) => r.json(),
    )
    expect(catalog.tools.map((tool: { name: string }) => tool.name)).toEqual([
      'read_file',
      'list_files',
      'get_job',
      'cancel_job',
    ])
  })

  it('may use its allowed tools on its tenant', async () => {
    await server.call('write_file', { path: 'shared.txt', content: 'from alice' }, { key: aliceKey })
    const result = await server.call('read_file', { path: 'shared.txt' }, { key: readerKey })
    expect(result.body.content).toBe('from alice')
  })
})

describe('tenant and workspace isolation', () => {
  it('a tenant never sees another tenant’s files, whatever the workspace', async () => {
    await server.call('write_file', { path: 'secret.txt', content: 'alice only' }, { key: aliceKey, workspace: 'w1' })
    const bobRead = await server.call('read_file', { path: 'secret.txt' }, { key: bobKey, workspace: 'w1' })
    expect(bobRead.status).toBe(404)
    const bobList = await server.call('list_files', { recursive: true }, { key: bobKey, workspace: 'w1' })
    expect(bobList.body.entries).toEqual([])
    const bobDelete = await server.call('delete_file', { path: 'secret.txt' }, { key: bobKey, workspace: 'w1' })
    expect(bobDelete.body.deleted).toBe(false)
    await server.call('write_file', { path: 'secret.txt', content: 'bob overwrite' }, { key: bobKey, workspace: 'w1' })
    const aliceRead = await server.call('read_file', { path: 'secret.txt' }, { key: aliceKey, workspace: 'w1' })
    expect(aliceRead.body.content).toBe('alice only')
  })

  it('workspaces of one tenant are separate', async () => {
    await server.call('write_file', { path: 'only-in-w2.txt', content: 'w2' }, { key: aliceKey, workspace: 'w2' })
    expect(
      (await server.call('read_file', { path: 'only-in-w2.txt' }, { key: aliceKey, workspace: 'w3' })).status,
    ).toBe(404)
    expect((await server.call('read_file', { path: 'only-in-w2.txt' }, { key: aliceKey })).status).toBe(404)
  })

  it('stores objects under tenants/{tenant}/workspaces/{workspace}/{path}', async () => {
    expect(await server.storage.head('tenants/alice/workspaces/w1/secret.txt')).not.toBeNull()
    expect(await server.storage.head('tenants/bob/workspaces/w1/secret.txt')).not.toBeNull()
    expect(await server.storage.head('tenants/alice/workspaces/default/shared.txt')).not.toBeNull()
  })

  it('without keys every caller is tenant "default"', async () => {
    const open = await startTestServer()
    try {
      await open.call('write_file', { path: 'a.txt', content: 'a' })
      expect(await open.storage.head('tenants/default/workspaces/default/a.txt')).not.toBeNull()
    } finally {
      await open.stop()
    }
  })
})
