import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fixtureHost } from '../support/egress-fixtures'
import { egressHarness } from '../support/egress-harness'
import type { TestServer } from '../support/server'
import { bundleFixtureInto } from '../support/stdio-fixture'

// A worker source (a local JSON-RPC program in the sandbox, reference 002's plugin worker) has the
// network the operator's egress policy opens, on real bubblewrap and the real proxy: the allow-list's
// hosts and nothing else. (With the default policy it has none: sources-worker.test.ts.)

const harness = egressHarness(() => ({ TOOLPORT_SANDBOX: 'bwrap' }))
let server: TestServer
let sources: string
let code: string

beforeAll(async () => {
  sources = await mkdtemp(join(tmpdir(), 'toolport-worker-egress-'))
  code = await mkdtemp(join(tmpdir(), 'toolport-worker-code-'))
  await bundleFixtureInto('plugin-worker.ts', code, 'worker.mjs')
  await writeFile(
    join(sources, 'net.json'),
    JSON.stringify({
      id: 'net',
      kind: 'worker',
      command: ['node', '/opt/worker/worker.mjs'],
      mounts: [{ host: code, sandbox: '/opt/worker' }],
      timeout_seconds: 10,
      tools: [
        {
          name: 'worker_get',
          method: 'network',
          description: 'GETs a URL from inside the worker.',
          effect: 'external',
          input_schema: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
        },
      ],
    }),
  )
  server = await harness.serve({
    TOOLPORT_SHELL_EGRESS: 'allow',
    TOOLPORT_SHELL_EGRESS_ALLOW: `${fixtureHost}:${harness.fixtures.http}`,
    TOOLPORT_SOURCES_DIR: sources,
  })
}, 60_000)
afterAll(async () => {
  await rm(sources, { recursive: true, force: true })
  await rm(code, { recursive: true, force: true })
})

const get = (url: string) => server.call('worker_get', { url }, { key: harness.key })

describe('a worker and the egress rules', () => {
  it("reaches a host of the operator's allow-list through the proxy", async () => {
    const answer = await get(harness.url(harness.fixtures.http, '/allowed'))
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    expect(answer.body).toMatchObject({ reached: true, status: 200 })
    expect(answer.body.body.trim()).toBe('fixture /allowed')
  })

  it('does not reach a host outside the allow-list', async () => {
    const before = harness.fixtures.hits.get(harness.fixtures.forbidden)?.length ?? 0
    const answer = await get(harness.url(harness.fixtures.forbidden, '/forbidden'))
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    expect(answer.body.body ?? '').not.toContain('fixture /forbidden')
    expect(harness.fixtures.hits.get(harness.fixtures.forbidden)?.length ?? 0).toBe(before)
  })
})
