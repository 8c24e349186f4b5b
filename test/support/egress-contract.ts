import { networkInterfaces } from 'node:os'
import { beforeAll, describe, expect, it } from 'vitest'
import { fixtureHost } from './egress-fixtures'
import type { EgressHarness, HostRecord } from './egress-harness'
import { curl, nodeFetch, nodeViaProxy, python } from './egress-scripts'
import type { TestServer } from './server'

/**
 * The sandbox's network, attacked from inside through the public interface (execute_command over
 * HTTP) on a real executor and the real proxy, with no network and with an allow-list. Every upstream
 * is a fixture on 127.0.0.1, reachable by the address rules only because TOOLPORT_FETCH_ALLOW_HOSTS
 * names it; names resolve through the fixtures' DNS answers (the one part not run for real: there is
 * no DNS server for test names). The public policy and the limits: egress-limits-contract.ts.
 */
export function egressContract(harness: EgressHarness): void {
  const { key, narrowKey, url, serve, sh, hostRecord } = harness

  describe('egress none (the default)', () => {
    let server: TestServer
    beforeAll(async () => {
      server = await serve({})
    })

    it('curl, Python urllib and Node fetch all fail to connect, and no proxy is named', async () => {
      const before = harness.fixtures.hits.get(harness.fixtures.http)?.length
      const target = `http://127.0.0.1:${harness.fixtures.http}/none`
      const result = await sh(
        server,
        [curl(target), python(target), nodeFetch(target), 'env | grep -ci proxy'].join('; '),
      )
      expect(result.status, JSON.stringify(result.body)).toBe(200)
      const lines = result.body.stdout.trim().split('\n')
      expect(lines.filter((line: string) => line.startsWith('ERR')).length, result.body.stdout).toBe(3)
      expect(result.body.stdout).toMatch(/Connection refused|ECONNREFUSED/)
      expect(lines.at(-1)).toBe('0')
      expect(result.body.egress).toBeUndefined()
      expect(harness.fixtures.hits.get(harness.fixtures.http)?.length).toBe(before)
    })

    it('refuses a call that asks for any network', async () => {
      for (const egress of ['public', { allow: [`${fixtureHost}:${harness.fixtures.http}`] }]) {
        const result = await sh(server, 'true', { egress })
        expect(result.status).toBe(403)
        expect(result.body).toMatchObject({ code: 'permission_denied', field: 'egress' })
        expect(result.body.hint).toContain('"none"')
      }
      expect((await sh(server, 'echo ok', { egress: 'none' })).body.stdout).toBe('ok\n')
    })
  })

  describe('egress allow for the fixture host:ports', () => {
    let server: TestServer
    beforeAll(async () => {
      const allowed = [harness.fixtures.http, harness.fixtures.https].flatMap((port) => [
        `${fixtureHost}:${port}`,
        `private.test:${port}`,
        `mixed.test:${port}`,
      ])
      server = await serve(
        { TOOLPORT_SHELL_EGRESS: 'allow', TOOLPORT_SHELL_EGRESS_ALLOW: allowed.join(',') },
        { metrics: true, narrow: { allow: [`${fixtureHost}:${harness.fixtures.http}`] } },
      )
    })

    it('lets curl, Python urllib and Node reach it over HTTP and HTTPS (CONNECT)', async () => {
      const plain = url(harness.fixtures.http, '/plain')
      const secure = url(harness.fixtures.https, '/secure')
      const clients = [
        curl(plain),
        curl(secure),
        python(plain),
        python(secure),
        nodeViaProxy(plain),
        nodeViaProxy(secure),
      ]
      const result = await sh(server, clients.join('; '))
      expect(result.status, JSON.stringify(result.body)).toBe(200)
      expect(result.body.stdout.trim().split('\n'), result.body.output).toEqual([
        'fixture /plain',
        'fixture /secure',
        'fixture /plain',
        'fixture /secure',
        '200 fixture /plain',
        '200 fixture /secure',
      ])
      expect(harness.fixtures.hits.get(harness.fixtures.https)).toContain('GET /secure')
      const record = hostRecord(result.body, `${fixtureHost}:${harness.fixtures.https}`)
      expect(record).toMatchObject({ allowed: 3, refused: 0 })
      expect(record?.bytes_in).toBeGreaterThan(500)
      expect(result.body.egress.policy.allow).toContain(`${fixtureHost}:${harness.fixtures.https}`)
      // The tenant's usage counts what its commands' egress received (this is the server's first command).
      const received = result.body.egress.hosts.reduce((sum: number, host: HostRecord) => sum + host.bytes_in, 0)
      const usage = server.usage?.totals().find((entry) => entry.tenant === 'acme')
      expect(usage?.egress_bytes_in).toBeGreaterThanOrEqual(received * 0.9)
      expect(usage?.egress_bytes_in).toBeLessThanOrEqual(received * 1.1)
      expect(usage?.egress_bytes_out).toBeGreaterThan(0)
    })

    it('runs the command itself behind the relay: its exit status, the proxy variables, nothing of the relay', async () => {
      // The relay shell's own variables (socat-relay.ts) must not reach the command.
      const leaks = ['relay', 'port', 'local', 'state'].map((name) => `$\{${name}-none}`).join(' ')
      const result = await sh(server, `echo "$HTTP_PROXY $ALL_PROXY"; echo "${leaks}"; exit 7`)
      expect(result.status, JSON.stringify(result.body)).toBe(200)
      expect(result.body.exit_code, result.body.output).toBe(7)
      const [proxies, leftovers] = result.body.stdout.trim().split('\n')
      expect(proxies).toMatch(/^http:\/\/127\.0\.0\.1:(\d+) socks5h:\/\/127\.0\.0\.1:\1$/)
      expect(leftovers).toBe('none none none none')
      expect(result.body.stderr).toBe('')
    })

    it('refuses every other host, port, raw address, metadata, IPv6, IPv4-mapped and private resolution', async () => {
      const forbiddenBefore = harness.fixtures.hits.get(harness.fixtures.forbidden)?.length
      const raw = (address: string, port: number, path: string) => `${address}:${port}${path}`
      const attempts: Array<[string, string, RegExp]> = [
        [curl('https://example.org/'), 'example.org:443', /not in the server's allow-list/],
        [
          curl(url(harness.fixtures.forbidden, '/port', 'http')),
          `${fixtureHost}:${harness.fixtures.forbidden}`,
          /not in the server/,
        ],
        [
          curl(url(harness.fixtures.forbidden, '/port', 'https')),
          `${fixtureHost}:${harness.fixtures.forbidden}`,
          /not in the server/,
        ],
        [
          curl(`http://${raw('127.0.0.1', harness.fixtures.http, '/raw')}`),
          `127.0.0.1:${harness.fixtures.http}`,
          /not in the server/,
        ],
        [curl('http://169.254.169.254/latest/meta-data/'), '169.254.169.254:80', /not in the server/],
        [curl(`http://[::1]:${harness.fixtures.http}/v6`), `[::1]:${harness.fixtures.http}`, /not in the server/],
        [
          curl(`https://[::ffff:127.0.0.1]:${harness.fixtures.https}/`),
          `[::ffff:7f00:1]:${harness.fixtures.https}`,
          /not in the/,
        ],
        [
          curl(`http://private.test:${harness.fixtures.http}/`),
          `private.test:${harness.fixtures.http}`,
          /10\.0\.0\.7 is a private/,
        ],
        [
          curl(`https://mixed.test:${harness.fixtures.https}/`),
          `mixed.test:${harness.fixtures.https}`,
          /127\.0\.0\.1 is a loopback/,
        ],
      ]
      // NO_PROXY names the sandbox's own loopback; cleared here so raw loopback addresses go to the proxy too.
      const command = `export NO_PROXY= no_proxy=; ${attempts.map(([line]) => line).join('; ')}`
      const result = await sh(server, command)
      expect(result.status, JSON.stringify(result.body)).toBe(200)
      expect(result.body.stdout).not.toContain('fixture /')
      for (const [, host, reason] of attempts) {
        const record = hostRecord(result.body, host)
        expect(record, host).toMatchObject({ allowed: 0 })
        expect(record?.refused, host).toBeGreaterThan(0)
        expect(record?.reason, host).toMatch(reason)
        expect(result.body.stderr).toContain(`toolport: egress to ${host} refused: `)
      }
      expect(result.body.hint).toMatch(/refused/)
      expect(harness.fixtures.hits.get(harness.fixtures.forbidden)?.length).toBe(forbiddenBefore)
      // Each refused host is in the tenant's audit log, with the call's tool, as its admin reads it.
      const audit = await fetch(`${server.url}/v1/audit?action=egress.refused&limit=100`, {
        headers: { authorization: `Bearer ${harness.adminKey}` },
      })
      const audited = (await audit.json()) as { records: Array<{ target: string; details: unknown }> }
      expect(audit.status, JSON.stringify(audited)).toBe(200)
      const hosts = audited.records.map((entry) => entry.target)
      for (const [, host] of attempts) expect(hosts, host).toContain(host)
      expect(audited.records[0]?.details).toMatchObject({ tool: 'execute_command' })
    })

    it('leaves a program that ignores the proxy variables no way out', async () => {
      const before = [harness.fixtures.http, harness.fixtures.everywhere].map(
        (port) => harness.fixtures.hits.get(port)?.length,
      )
      const direct = `http://127.0.0.1:${harness.fixtures.http}/direct`
      const named = url(harness.fixtures.http, '/direct-name')
      // The host's own address, where a server listens on every interface.
      const hostAddress = Object.values(networkInterfaces())
        .flat()
        .find((entry) => entry?.family === 'IPv4' && !entry.internal)?.address
      const external = hostAddress
        ? [nodeFetch(`http://${hostAddress}:${harness.fixtures.everywhere}/direct-host`)]
        : []
      const result = await sh(
        server,
        [
          nodeFetch(direct),
          nodeFetch(named),
          curl(direct, "--noproxy '*'"),
          curl(named, "--noproxy '*'"),
          python(direct, 'none'),
          ...external,
        ].join('; '),
      )
      const failures = result.body.stdout.split('\n').filter((line: string) => line.startsWith('ERR'))
      expect(failures.length, result.body.stdout).toBe(5 + external.length)
      expect(result.body.stdout).not.toContain('fixture /')
      if (hostAddress) expect(result.body.stdout).toMatch(/ERR (ENETUNREACH|EHOSTUNREACH)/)
      expect(
        [harness.fixtures.http, harness.fixtures.everywhere].map((port) => harness.fixtures.hits.get(port)?.length),
      ).toEqual(before)
    })

    it('speaks SOCKS5 too, with the same checks (ALL_PROXY)', async () => {
      const result = await sh(
        server,
        `curl -sS --max-time 15 -x "$ALL_PROXY" ${url(harness.fixtures.http, '/socks')}; curl -sS --max-time 15 -x "$ALL_PROXY" http://example.org/ || echo refused`,
      )
      expect(result.body.stdout).toBe('fixture /socks\nrefused\n')
      expect(hostRecord(result.body, 'example.org:80')).toMatchObject({ refused: 1 })
    })

    it('answers malformed and hostile handshakes without opening anything, and keeps serving', async () => {
      const result = await sh(server, `node proxy-abuse.cjs; ${curl(url(harness.fixtures.http, '/after-abuse'))}`)
      expect(result.body.stdout.trim().split('\n'), result.body.output).toEqual([
        'HTTP/1.1 400 Bad Request',
        'HTTP/1.1 400 Bad Request',
        'HTTP/1.1 400 Bad Request',
        'HTTP/1.1 400 Bad Request',
        '(closed)',
        // No acceptable method; BIND is not supported (7); address type 9 does not exist (8).
        'socks 5,255',
        'socks 5,0,5,7',
        'socks 5,0,5,8',
        'fixture /after-abuse',
      ])
      expect(result.body.egress.connections).toEqual({ allowed: 1, refused: 0, failed: 0 })
    })

    it('narrows by key and by call, and refuses a call that asks for more', async () => {
      const both = `${curl(url(harness.fixtures.http, '/narrow'))}; ${curl(url(harness.fixtures.https, '/narrow'))}`
      const byKey = await sh(server, both, {}, narrowKey)
      expect(byKey.body.stdout).toMatch(/^fixture \/narrow\n/)
      expect(hostRecord(byKey.body, `${fixtureHost}:${harness.fixtures.https}`)?.reason).toBe(
        "not in this key's allow-list",
      )
      expect(byKey.body.stderr).toContain(
        `toolport: egress to ${fixtureHost}:${harness.fixtures.https} refused: not in this key's allow-list`,
      )

      const byCall = await sh(server, both, { egress: { allow: [`${fixtureHost}:${harness.fixtures.https}`] } })
      expect(hostRecord(byCall.body, `${fixtureHost}:${harness.fixtures.http}`)?.reason).toBe(
        "not in this call's egress allow-list",
      )
      expect(byCall.body.stdout).toContain('fixture /narrow')

      const none = await sh(server, `${curl(url(harness.fixtures.http, '/none'))}; env | grep -c PROXY`, {
        egress: 'none',
      })
      expect(none.body.stdout).toMatch(/^ERR|curl: \(6\)/)
      expect(none.body.egress).toBeUndefined()

      for (const [egress, withKey] of [
        ['public', key],
        [{ allow: ['example.org'] }, key],
        [{ allow: [`${fixtureHost}:${harness.fixtures.https}`] }, narrowKey],
        [{ allow: [`*.test:${harness.fixtures.http}`] }, key],
      ] as const) {
        const refused = await sh(server, 'true', { egress }, withKey)
        expect(refused.status, JSON.stringify(egress)).toBe(403)
        expect(refused.body).toMatchObject({ code: 'permission_denied', field: 'egress' })
      }
      for (const egress of [
        { allow: ['a b'] },
        { allow: [] },
        'all',
        { allow: ['@nope'] },
        { allow: ['x'], deny: [] },
      ]) {
        const invalid = await sh(server, 'true', { egress })
        expect(invalid.status, JSON.stringify(egress)).toBe(400)
        expect(invalid.body.field, JSON.stringify(egress)).toMatch(/^egress/)
      }
    })

    it('keeps the key narrower when its call runs later as a job', async () => {
      const submitted = await server.call(
        'execute_command',
        { command: curl(url(harness.fixtures.https, '/job')) },
        { key: narrowKey, workspace: 'net', headers: { prefer: 'respond-async' } },
      )
      expect(submitted.status).toBe(202)
      let job = submitted.body
      for (let attempt = 0; attempt < 200 && job.status !== 'succeeded' && job.status !== 'failed'; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        job = await fetch(job.status_url, { headers: { authorization: `Bearer ${narrowKey}` } }).then((r) => r.json())
      }
      expect(job.status).toBe('succeeded')
      expect(hostRecord(job.result, `${fixtureHost}:${harness.fixtures.https}`)?.reason).toBe(
        "not in this key's allow-list",
      )
    })

    it('states the effective policy in the dry run and in /v1/context', async () => {
      const dry = await fetch(`${server.url}/v1/tools/execute_command?workspace=net&dry_run=true`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${narrowKey}` },
        body: JSON.stringify({ command: 'curl x' }),
      }).then((response) => response.json())
      expect(dry).toMatchObject({
        dry_run: true,
        preview: { command: 'curl x', egress: { policy: { allow: [`${fixtureHost}:${harness.fixtures.http}`] } } },
      })
      expect(dry.preview.egress.limits.connections).toBe(256)
      const context = await fetch(`${server.url}/v1/context?format=json`, {
        headers: { authorization: `Bearer ${narrowKey}` },
      }).then((response) => response.json())
      expect(context.shell_egress.policy).toEqual({ allow: [`${fixtureHost}:${harness.fixtures.http}`] })
      const text = await fetch(`${server.url}/v1/context`, { headers: { authorization: `Bearer ${key}` } }).then(
        (response) => response.text(),
      )
      expect(text).toContain(`execute_command may connect only to ${fixtureHost}:${harness.fixtures.http}, `)
    })

    it('counts allowed and refused connections per tenant in /metrics', async () => {
      await sh(server, `${curl(url(harness.fixtures.http, '/metrics'))}; ${curl('http://example.org/')}`)
      const metrics = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${key}` } }).then(
        (response) => response.text(),
      )
      const count = (outcome: string) =>
        Number(
          new RegExp(
            `^toolport_sandbox_egress_connections_total\\{tenant="acme",outcome="${outcome}"\\} (\\d+)$`,
            'm',
          ).exec(metrics)?.[1] ?? 0,
        )
      expect(count('allowed')).toBeGreaterThan(0)
      expect(count('refused')).toBeGreaterThan(0)
      expect(metrics).toMatch(/^toolport_sandbox_egress_bytes_total\{tenant="acme",direction="in"\} [1-9]/m)
    })
  })
}
