import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { silentLogger } from '../../core/logger'
import { createFetchHttpClient } from '../../net/fetch-http'
import { createMemoryStorage } from '../../storage/memory'
import type { ObjectStore } from '../../storage/store'
import { createSourceHost, type SourceHost } from './source-host'

/** An OpenAPI upstream that refuses (drops the connection) or hangs (holds every request) until released. */
async function startUpstream() {
  const held: ServerResponse[] = []
  const upstream = { mode: 'refuse' as 'refuse' | 'hang', held, url: '', host: '' }
  const server = createServer((_request, response) => {
    if (upstream.mode === 'hang') held.push(response)
    else response.socket?.destroy()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  upstream.host = `127.0.0.1:${(server.address() as AddressInfo).port}`
  upstream.url = `http://${upstream.host}/openapi.json`
  const release = () => {
    for (const response of held.splice(0)) response.socket?.destroy()
  }
  const stop = () =>
    new Promise<void>((resolve) => {
      release()
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return { upstream, release, stop }
}

type Upstream = Awaited<ReturnType<typeof startUpstream>>

let running: { upstream: Upstream; host: SourceHost } | undefined
afterEach(async () => {
  running?.upstream.release()
  await running?.host.close()
  await running?.upstream.stop()
  running = undefined
})

/** A host whose calls would wait an hour for a loading source: any wait the tests see is one too many. */
async function hostWith(storage: ObjectStore = createMemoryStorage()) {
  const upstream = await startUpstream()
  const clock = { offsetMs: 0 }
  const host = createSourceHost({
    storage,
    builtins: [],
    log: silentLogger,
    refreshMs: 0,
    upstreamRefreshMs: 3_600_000,
    tenantKinds: ['openapi'],
    maxTenantSources: 10,
    maxTenantSourceTools: 100,
    http: createFetchHttpClient({ policy: { allowHosts: [upstream.upstream.host] } }),
    httpAllowing: undefined,
    processes: undefined,
    keepWarm: false,
    environment: {},
    tenantSecrets: () => ({}),
    now: () => Date.now() + clock.offsetMs,
    loadWaitMs: 3_600_000,
  })
  running = { upstream, host }
  return { host, upstream, clock }
}

const manifest = (url: string) => ({ id: 'slow', kind: 'openapi', url })

async function until(check: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 500 && !check(); attempt++) await new Promise((resolve) => setTimeout(resolve, 10))
}

const statusOf = async (host: SourceHost, tenant: string, forCall = false) =>
  (await host.forTenant(tenant, { forCall })).statuses.find((status) => status.id === 'slow')?.status

describe('a tenant source whose upstream hangs', () => {
  it('does not hold the tenant’s calls while a retry after an error hangs', async () => {
    const { host, upstream, clock } = await hostWith()
    const put = await host.put('acme', 'slow', manifest(upstream.upstream.url))
    expect(put.status.status).toBe('error')
    upstream.upstream.mode = 'hang'
    // Past the retry delay: this call starts the retry, which hangs, and is answered without waiting for it.
    clock.offsetMs = 31_000
    expect(await statusOf(host, 'acme')).toBe('loading')
    await until(() => upstream.upstream.held.length === 1)
    expect(await statusOf(host, 'acme')).toBe('loading')
    upstream.release()
  })

  it('makes calls wait for its first load only until the wait since the first of them is over', async () => {
    const storage = createMemoryStorage()
    const { host, upstream, clock } = await hostWith(storage)
    // Registered through another instance: this one meets it on its first load.
    await storage.put('sources/tenants/acme/slow.json', JSON.stringify(manifest(upstream.upstream.url)))
    upstream.upstream.mode = 'hang'
    const first = statusOf(host, 'acme', true)
    await until(() => upstream.upstream.held.length === 1)
    // The wait the first call started is over for every call, though the load still hangs.
    clock.offsetMs = 3_600_001
    expect(await statusOf(host, 'acme', true)).toBe('loading')
    upstream.release()
    expect(await first).toBe('error')
  })

  it('never makes a listing wait for an upstream, even on its first load: the source is listed as loading', async () => {
    const storage = createMemoryStorage()
    const { host, upstream } = await hostWith(storage)
    await storage.put('sources/tenants/acme/slow.json', JSON.stringify(manifest(upstream.upstream.url)))
    upstream.upstream.mode = 'hang'
    // Calls would wait an hour for this first load (loadWaitMs); a listing answers at once.
    expect(await statusOf(host, 'acme')).toBe('loading')
    await until(() => upstream.upstream.held.length === 1)
    expect(await statusOf(host, 'acme')).toBe('loading')
    upstream.release()
  })
})
