import { beforeAll, describe, expect, it } from 'vitest'
import { fixtureHost } from './egress-fixtures'
import type { EgressHarness } from './egress-harness'
import { curl } from './egress-scripts'
import type { TestServer } from './server'

/** The egress suite's second half: the public policy's address rules, and the per-call limits cutting floods. */
export function egressLimitsContract(harness: EgressHarness): void {
  const { url, serve, sh, hostRecord } = harness

  describe('egress public', () => {
    let server: TestServer
    beforeAll(async () => {
      server = await serve({ TOOLPORT_SHELL_EGRESS: 'public' })
    })

    it('applies the address rules to every name and address; TOOLPORT_FETCH_ALLOW_HOSTS is the one exception', async () => {
      const attempts: Array<[string, RegExp]> = [
        [`127.0.0.1:${harness.fixtures.http}`, /127\.0\.0\.1 is a loopback address/],
        ['169.254.169.254:80', /link-local/],
        ['metadata.google.internal:80', /cloud metadata service/],
        [`private.test:${harness.fixtures.http}`, /10\.0\.0\.7 is a private address/],
        [`[::ffff:7f00:1]:${harness.fixtures.http}`, /IPv4-mapped/],
        [`[fd00::1]:${harness.fixtures.http}`, /unique-local/],
        [`localhost:${harness.fixtures.http}`, /this machine/],
      ]
      const command = [
        'export NO_PROXY= no_proxy=',
        curl(url(harness.fixtures.http, '/trusted')),
        ...attempts.map(([target]) => curl(`http://${target}/`)),
      ].join('; ')
      const result = await sh(server, command)
      expect(result.body.stdout).toMatch(/^fixture \/trusted\n/)
      for (const [host, reason] of attempts) expect(hostRecord(result.body, host)?.reason, host).toMatch(reason)
      expect(result.body.egress.policy).toBe('public')
    })
  })

  describe('egress limits', () => {
    let server: TestServer
    beforeAll(async () => {
      server = await serve({
        TOOLPORT_SHELL_EGRESS: 'allow',
        TOOLPORT_SHELL_EGRESS_ALLOW: `${fixtureHost}:${harness.fixtures.http}`,
        TOOLPORT_SHELL_EGRESS_CONNECTIONS: '3',
        TOOLPORT_SHELL_EGRESS_BYTES_IN: String(1024 * 1024),
        TOOLPORT_SHELL_EGRESS_BYTES_OUT: String(256 * 1024),
        TOOLPORT_SHELL_EGRESS_CONNECTION_SECONDS: '2',
      })
    })

    it('cuts a download flood at the bytes-in limit', async () => {
      const result = await sh(
        server,
        `curl -sS -o /dev/null -w '%{size_download}\\n' ${url(harness.fixtures.http, '/flood')}`,
      )
      expect(Number(result.body.stdout.trim().split('\n')[0])).toBeLessThanOrEqual(1024 * 1024)
      expect(result.body.egress).toMatchObject({ bytes_in: 1024 * 1024, limits_reached: ['bytes_in'] })
      expect(result.body.stderr).toContain("cut: this call's limit of 1048576 bytes received is reached")
    })

    it('cuts an upload flood at the bytes-out limit', async () => {
      const result = await sh(
        server,
        `head -c 2000000 /dev/zero | curl -sS -X POST --data-binary @- ${url(harness.fixtures.http, '/upload')}; echo "exit=$?"`,
      )
      expect(result.body.stdout).not.toContain('received 2000000')
      expect(result.body.egress.limits_reached).toEqual(['bytes_out'])
      expect(result.body.egress.bytes_out).toBe(256 * 1024)
    })

    it('refuses connections past the connection limit', async () => {
      const loop = `for i in 1 2 3 4 5; do curl -s -o /dev/null -w '%{http_code} ' ${url(harness.fixtures.http, '/n$i')}; done`
      const result = await sh(server, loop)
      expect(result.body.stdout).toBe('200 200 200 403 403 ')
      expect(result.body.egress).toMatchObject({
        connections: { allowed: 3, refused: 2 },
        limits_reached: ['connections'],
      })
      expect(result.body.stderr).toContain("refused: this call's limit of 3 connections is reached")
    })

    it('cuts a connection held open past the time limit', async () => {
      const result = await sh(server, `curl -sS -o /dev/null ${url(harness.fixtures.http, '/slow')}; echo "exit=$?"`)
      expect(result.body.stdout).toMatch(/^exit=(18|52|56)\n$/)
      expect(result.body.egress.limits_reached).toEqual(['connection_time'])
      expect(result.body.timed_out).toBe(false)
    })
  })
}
