import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fixtureHost } from '../support/egress-fixtures'
import { egressHarness } from '../support/egress-harness'
import type { TestServer } from '../support/server'

// A command source's tool gets exactly the network execute_command gets for the calling key, on real
// bubblewrap and the real proxy: the operator's allow-list, narrowed by the key (none for a key whose
// egress is none). Its manifest cannot open any of its own.

const harness = egressHarness(() => ({ TOOLPORT_SANDBOX: 'bwrap' }))
let server: TestServer
let sources: string

beforeAll(async () => {
  sources = await mkdtemp(join(tmpdir(), 'toolport-command-egress-'))
  await writeFile(
    join(sources, 'net.json'),
    JSON.stringify({
      id: 'net',
      kind: 'command',
      tools: [
        {
          name: 'fetch_url',
          description: 'Fetches a URL with curl.',
          effect: 'external',
          input_schema: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
          argv: ['sh', '-c', 'curl -sS --max-time 10 "$0" 2>&1 || echo "ERR curl exit $?"', '{input.url}'],
        },
      ],
    }),
  )
  server = await harness.serve(
    {
      TOOLPORT_SHELL_EGRESS: 'allow',
      TOOLPORT_SHELL_EGRESS_ALLOW: `${fixtureHost}:${harness.fixtures.http}`,
      TOOLPORT_SOURCES_DIR: sources,
    },
    { narrow: 'none' },
  )
  for (let attempt = 0; attempt < 100; attempt++) {
    const listed = await (
      await fetch(`${server.url}/v1/tools`, { headers: { authorization: `Bearer ${harness.key}` } })
    ).json()
    if (listed.tools?.some((tool: { name: string }) => tool.name === 'fetch_url')) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error('the command source did not load')
}, 60_000)
afterAll(async () => {
  await rm(sources, { recursive: true, force: true })
})

const fetchUrl = (url: string, key: string) => server.call('fetch_url', { url }, { key, workspace: 'net' })

describe('a command tool and the egress rules', () => {
  it('reaches a host of the operator’s allow-list, like execute_command', async () => {
    const answer = await fetchUrl(harness.url(harness.fixtures.http, '/allowed'), harness.key)
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    expect(answer.body.stdout.trim()).toBe('fixture /allowed')
  })

  it('does not reach a host outside the allow-list', async () => {
    const before = harness.fixtures.hits.get(harness.fixtures.forbidden)?.length ?? 0
    const answer = await fetchUrl(harness.url(harness.fixtures.forbidden, '/forbidden'), harness.key)
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    expect(answer.body.stdout).not.toContain('fixture /forbidden')
    expect(harness.fixtures.hits.get(harness.fixtures.forbidden)?.length ?? 0).toBe(before)
  })

  it('has no network at all for a key whose egress is none', async () => {
    const before = harness.fixtures.hits.get(harness.fixtures.http)?.length ?? 0
    const answer = await fetchUrl(harness.url(harness.fixtures.http, '/narrow'), harness.narrowKey)
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    expect(answer.body.stdout).toMatch(/^ERR curl exit|Could not resolve|Connection refused|Failed to connect/)
    expect(harness.fixtures.hits.get(harness.fixtures.http)?.length ?? 0).toBe(before)
    // The same key's own execute_command is refused the same network.
    const own = await harness.sh(server, 'true', { egress: 'public' }, harness.narrowKey)
    expect(own.status).toBe(403)
  })
})
