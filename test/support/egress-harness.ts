import { afterAll, beforeAll } from 'vitest'
import { parseKeysFile } from '../../src/auth/keys'
import { type EgressFixtures, fixtureHost, startEgressFixtures } from './egress-fixtures'
import { caFile, nodeProxyClient, proxyAbuseClient } from './egress-scripts'
import { type CallResult, startTestServer, type TestServer } from './server'

/**
 * What the egress suites share: the fixtures, servers on the executor under test (keys: a wide one,
 * the tenant's admin, and, when asked, a narrower one), and helpers to run commands and read the result's egress record.
 * Registers its own beforeAll/afterAll.
 */
export interface EgressHarness {
  readonly fixtures: EgressFixtures
  key: string
  narrowKey: string
  /** The tenant's admin key: reads its audit log over GET /v1/audit. */
  adminKey: string
  url(port: number, path: string, scheme?: string): string
  serve(env: Record<string, string>, options?: { metrics?: boolean; narrow?: unknown }): Promise<TestServer>
  sh(server: TestServer, command: string, extra?: Record<string, unknown>, withKey?: string): Promise<CallResult>
  hostRecord(body: { egress?: { hosts: HostRecord[] } }, host: string): HostRecord | undefined
}

export interface HostRecord {
  host: string
  allowed: number
  refused: number
  bytes_in: number
  reason?: string
}

export function egressHarness(executorEnv: () => Record<string, string>, prepare?: () => Promise<void>): EgressHarness {
  let fixtures: EgressFixtures | undefined
  const started: TestServer[] = []
  const key = 'egress-wide-key-0123456789'
  const narrowKey = 'egress-narrow-key-0123456789'
  const adminKey = 'egress-admin-key-0123456789'
  const loaded = () => {
    if (!fixtures) throw new Error('the egress fixtures are not started yet')
    return fixtures
  }
  beforeAll(async () => {
    await prepare?.()
    fixtures = await startEgressFixtures()
  })
  afterAll(async () => {
    for (const server of started) await server.stop()
    await fixtures?.close()
  })
  return {
    get fixtures() {
      return loaded()
    },
    key,
    narrowKey,
    adminKey,
    url: (port, path, scheme = port === loaded().https ? 'https' : 'http') =>
      `${scheme}://${fixtureHost}:${port}${path}`,
    async serve(env, options = {}) {
      const current = loaded()
      const trusted = [current.http, current.https, current.forbidden].map((port) => `${fixtureHost}:${port}`)
      const keys = [
        { tenant: 'acme', key },
        { tenant: 'acme', key: adminKey, admin: true },
        ...(options.narrow ? [{ tenant: 'acme', key: narrowKey, egress: options.narrow }] : []),
      ]
      const server = await startTestServer(
        { ...executorEnv(), TOOLPORT_FETCH_ALLOW_HOSTS: trusted.join(','), ...env },
        {
          shell: true,
          egressResolve: current.resolve,
          fileKeys: parseKeysFile(JSON.stringify(keys)),
          ...(options.metrics ? { metrics: true } : {}),
        },
      )
      started.push(server)
      for (const [path, content] of [
        [caFile, current.certificate],
        ['proxy-client.cjs', nodeProxyClient],
        ['proxy-abuse.cjs', proxyAbuseClient],
      ])
        await server.call('write_file', { path, content }, { key, workspace: 'net' })
      return server
    },
    sh: (server, command, extra = {}, withKey = key) =>
      server.call('execute_command', { command, timeout_seconds: 60, ...extra }, { key: withKey, workspace: 'net' }),
    hostRecord: (body, host) => body.egress?.hosts.find((entry) => entry.host === host),
  }
}
