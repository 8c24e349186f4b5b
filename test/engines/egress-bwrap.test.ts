import { beforeAll, describe, expect, it } from 'vitest'
import { egressContract } from '../support/egress-contract'
import { fixtureHost } from '../support/egress-fixtures'
import { egressHarness } from '../support/egress-harness'
import { egressLimitsContract } from '../support/egress-limits-contract'
import type { TestServer } from '../support/server'

// The sandbox's network on real bubblewrap and the real proxy: the host's curl, python3 and node inside,
// relayed by socat (TOOLPORT_SHELL_EGRESS_RELAY=auto with socat installed; .ci/run installs it).
const harness = egressHarness(() => ({ TOOLPORT_SANDBOX: 'bwrap' }))
egressContract(harness)
egressLimitsContract(harness)

describe('the socat relay', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await harness.serve({
      TOOLPORT_SHELL_EGRESS: 'allow',
      TOOLPORT_SHELL_EGRESS_ALLOW: `${fixtureHost}:${harness.fixtures.http}`,
    })
  })

  it('is socat, adopted by the sandbox init rather than a child of the command', async () => {
    const ready = await fetch(`${server.url}/readyz`)
    expect(JSON.stringify(await ready.json())).toContain('through socat on the sandbox')
    const result = await harness.sh(
      server,
      'for stat in /proc/[0-9]*/stat; do read -r pid name state parent rest < $stat; echo "$name $parent"; done | grep socat; echo "self $PPID"',
    )
    expect(result.body.exit_code, result.body.output).toBe(0)
    expect(result.body.stdout.trim().split('\n')).toEqual(['(socat) 1', 'self 1'])
  })

  it('listens with a backlog for bursts, and takes 64 parallel connections', async () => {
    const target = harness.url(harness.fixtures.http, '/plain')
    // ss prints a listening socket's backlog as its Send-Q (socat's own default is 5: a burst past it
    // waits for SYN retries of a second and more).
    const listening = await harness.sh(server, 'ss -Hltn')
    expect(listening.body.stdout.trim().split(/\s+/).slice(0, 4), listening.body.output).toEqual([
      'LISTEN',
      '0',
      '128',
      expect.stringMatching(/^127\.0\.0\.1:\d+$/),
    ])
    const result = await harness.sh(
      server,
      `curl -sS --parallel --parallel-immediate --parallel-max 64 $(for i in $(seq 64); do printf '%s -o /dev/stdout ' ${target}; done) | grep -c 'fixture /plain'`,
    )
    expect(result.body.stdout.trim(), result.body.output).toBe('64')
    expect(harness.hostRecord(result.body, `${fixtureHost}:${harness.fixtures.http}`)).toMatchObject({
      allowed: 64,
      refused: 0,
    })
  })
})
