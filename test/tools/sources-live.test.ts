import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createFsStorage } from '../../src/storage/fs'
import type { ObjectStore } from '../../src/storage/store'
import type { LocalWeb } from '../support/local-web'
import { startTestServer, type TestServer } from '../support/server'
import { startSourceUpstreams } from '../support/source-upstreams'

// Two instances over one bucket, as behind a load balancer: a change made through one is seen by the
// other within TOOLPORT_SOURCES_REFRESH_SECONDS, with no restart; so is an operator manifest that another
// writer puts under sources/operator/.

const adminKey = 'live-admin-key-0123456789'
const otherKey = 'live-other-key-0123456789'
let first: TestServer
let second: TestServer
let upstream: LocalWeb
let storage: ObjectStore
let folder: string

beforeAll(async () => {
  upstream = await startSourceUpstreams()
  folder = await mkdtemp(join(tmpdir(), 'toolport-live-'))
  storage = await createFsStorage({ root: folder })
  const env = { TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${upstream.port}`, TOOLPORT_SOURCES_REFRESH_SECONDS: '1' }
  const keys = [
    { tenant: 'acme', key: adminKey, admin: true },
    { tenant: 'globex', key: otherKey },
  ]
  first = await startTestServer(env, { storage, fileKeys: keys })
  second = await startTestServer(env, { storage, fileKeys: keys })
})
afterAll(async () => {
  await first?.stop()
  await second?.stop()
  await upstream?.stop()
  if (folder) await rm(folder, { recursive: true, force: true })
})

const manifest = (id: string, description = 'Adds.') => ({
  id,
  kind: 'http',
  protocol: 'jsonrpc',
  url: `${upstream.url}/rpc`,
  tools: [
    {
      name: `${id.replace(/-/g, '_')}_add`,
      method: 'add',
      effect: 'read',
      description,
      input_schema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
    },
  ],
})

async function tools(server: TestServer, key = adminKey) {
  const response = await fetch(`${server.url}/v1/tools`, { headers: { authorization: `Bearer ${key}` } })
  return (await response.json()) as { revision: string; tools: Array<{ name: string; description: string }> }
}

/** Waits until the catalog passes `check`; returns how long it took. */
async function seen(server: TestServer, check: (names: string[]) => boolean): Promise<number> {
  const started = Date.now()
  for (let attempt = 0; attempt < 200; attempt++) {
    if (check((await tools(server)).tools.map((tool) => tool.name))) return Date.now() - started
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error('the other instance never saw the change')
}

describe('sources across instances', () => {
  it('a source registered through one instance is served by the other, and its removal too', async () => {
    const put = await fetch(`${first.url}/v1/sources/calc`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(manifest('calc')),
    })
    expect(put.status).toBe(201)
    // The instance that made the change serves it at once.
    expect((await tools(first)).tools.some((tool) => tool.name === 'calc_add')).toBe(true)
    await seen(second, (names) => names.includes('calc_add'))
    expect((await second.call('calc_add', { a: 1, b: 2 }, { key: adminKey })).body).toEqual({ sum: 3 })
    // Another tenant never sees it, on either instance.
    expect((await tools(second, otherKey)).tools.some((tool) => tool.name === 'calc_add')).toBe(false)
    const removed = await fetch(`${first.url}/v1/sources/calc`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${adminKey}` },
    })
    expect(removed.status).toBe(204)
    await seen(second, (names) => !names.includes('calc_add'))
  })

  it('an operator manifest another writer puts in storage reaches every tenant on every instance', async () => {
    const before = (await tools(first, otherKey)).revision
    await storage.put('sources/operator/shared-calc.json', JSON.stringify(manifest('shared-calc', 'Adds for all.')))
    await seen(first, (names) => names.includes('shared_calc_add'))
    await seen(second, (names) => names.includes('shared_calc_add'))
    const other = await tools(second, otherKey)
    expect(other.revision).not.toBe(before)
    expect(other.tools.find((tool) => tool.name === 'shared_calc_add')?.description).toBe('Adds for all.')
    await storage.put('sources/operator/shared-calc.json', JSON.stringify(manifest('shared-calc', 'Adds, changed.')))
    for (let attempt = 0; attempt < 100; attempt++) {
      const found = (await tools(first, otherKey)).tools.find((tool) => tool.name === 'shared_calc_add')
      if (found?.description === 'Adds, changed.') break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect((await tools(first, otherKey)).tools.find((tool) => tool.name === 'shared_calc_add')?.description).toBe(
      'Adds, changed.',
    )
    await storage.delete('sources/operator/shared-calc.json')
    await seen(second, (names) => !names.includes('shared_calc_add'))
  })

  it('a tenant source cannot take an operator source id', async () => {
    await storage.put('sources/operator/owned.json', JSON.stringify(manifest('owned')))
    await seen(first, (names) => names.includes('owned_add'))
    const put = await fetch(`${first.url}/v1/sources/owned`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(manifest('owned')),
    })
    expect(put.status).toBe(409)
  })
})

describe('source changes by compare-and-swap', () => {
  it('refuses with 409 a PUT or DELETE over a version another instance replaced since this one loaded it', async () => {
    // Instances that list again only every hour: the second still holds the version it first loaded.
    const env = { TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${upstream.port}`, TOOLPORT_SOURCES_REFRESH_SECONDS: '3600' }
    const keys = [{ tenant: 'initech', key: adminKey, admin: true }]
    const shared = await createFsStorage({ root: join(folder, 'cas') })
    const one = await startTestServer(env, { storage: shared, fileKeys: keys })
    const two = await startTestServer(env, { storage: shared, fileKeys: keys })
    const put = (server: TestServer, description: string) =>
      fetch(`${server.url}/v1/sources/calc`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(manifest('calc', description)),
      })
    try {
      expect((await put(one, 'First.')).status).toBe(201)
      expect((await tools(two)).tools.map((tool) => tool.description)).toContain('First.')
      expect((await put(one, 'Second.')).status).toBe(200)
      const stale = await put(two, 'Stale.')
      expect(stale.status).toBe(409)
      expect(await stale.json()).toMatchObject({
        code: 'conflict',
        detail: expect.stringMatching(/changed by another request/),
      })
      const removed = await fetch(`${two.url}/v1/sources/calc`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${adminKey}` },
      })
      expect(removed.status).toBe(409)
      // What the first instance stored is what storage keeps.
      const stored = await shared.get('sources/tenants/initech/calc.json')
      expect(new TextDecoder().decode(stored?.body)).toContain('Second.')
    } finally {
      await one.stop()
      await two.stop()
    }
  })
})
