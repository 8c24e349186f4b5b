import { isDeepStrictEqual } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type LocalWeb, startLocalWeb } from '../support/local-web'
import { startTestServer, type TestServer } from '../support/server'

// Usage per tenant, fleet-wide: two instances on one bucket, a scripted mix of calls on each, and
// GET /v1/usage on either answers the sum (calls exactly; seconds and bytes within 10%). Each instance
// writes only its own running totals, so neither overwrites the other's.

const admin = 'usage-admin-key-0123456789'
const reader = 'usage-reader-key-0123456789'
const otherAdmin = 'usage-other-admin-key-0123456789'
const keys = [
  { tenant: 'acme', key: admin, admin: true },
  { tenant: 'acme', key: reader, tools: ['read_file'] },
  { tenant: 'globex', key: otherAdmin, admin: true },
]
const pageBytes = 100_000
let first: TestServer
let second: TestServer
let site: LocalWeb

beforeAll(async () => {
  site = await startLocalWeb({
    '/big': (_request, response) => {
      response.setHeader('content-type', 'text/plain')
      response.end('x'.repeat(pageBytes))
    },
    '/page': (_request, response) => {
      response.setHeader('content-type', 'text/html')
      response.end('<title>usage</title><p>a page</p>')
    },
  })
  const env = { TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${site.port}`, TOOLPORT_USAGE_FLUSH_MS: '100' }
  first = await startTestServer(env, { fileKeys: keys, shell: true })
  second = await startTestServer(env, { fileKeys: keys, storage: first.storage })
}, 120_000)

afterAll(async () => {
  await second?.stop()
  await first?.stop()
  await site?.stop()
})

// biome-ignore lint/suspicious/noExplicitAny: tests inspect arbitrary JSON
type Json = any

async function usage(server: TestServer, key = admin, query = ''): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${server.url}/v1/usage${query}`, { headers: { authorization: `Bearer ${key}` } })
  return { status: response.status, body: await response.json() }
}

const today = () => new Date().toISOString().slice(0, 10)

/** Seconds a call took, seen from the client. */
async function timed<T>(work: () => Promise<T>): Promise<{ value: T; seconds: number }> {
  const started = performance.now()
  const value = await work()
  return { value, seconds: (performance.now() - started) / 1000 }
}

describe('usage per tenant', () => {
  it('sums a mix of calls on two instances: calls exactly, seconds and bytes within 10%', async () => {
    // On the first: three writes, two reads, a read of nothing, a refused call, a CPU-bound command.
    for (const name of ['a', 'b', 'c']) {
      expect(
        (await first.call('write_file', { path: `${name}.txt`, content: 'y'.repeat(1000) }, { key: admin })).status,
      ).toBe(200)
    }
    for (const name of ['a', 'b'])
      expect((await first.call('read_file', { path: `${name}.txt` }, { key: admin })).status).toBe(200)
    expect((await first.call('read_file', { path: 'none.txt' }, { key: admin })).status).toBe(404)
    const slow = await timed(() =>
      first.call(
        'execute_command',
        // About 1.5 s of CPU in the sandbox, measured by the command itself.
        {
          command: `python3 -c "import time\nt=time.process_time()\nwhile time.process_time()-t<1.5: pass\nprint(time.process_time())"`,
        },
        { key: admin },
      ),
    )
    expect(slow.value.status, JSON.stringify(slow.value.body)).toBe(200)
    const commandCpu = Number(slow.value.body.stdout)
    // On the second: two reads, a fetch of 100 kB twice, a browser session held about two seconds.
    for (const name of ['a', 'c'])
      expect((await second.call('read_file', { path: `${name}.txt` }, { key: reader })).status).toBe(200)
    for (let index = 0; index < 2; index++) {
      const fetched = await second.call('http_fetch', { url: `${site.url}/big`, max_bytes: 200_000 }, { key: admin })
      expect(fetched.status, JSON.stringify(fetched.body).slice(0, 300)).toBe(200)
    }
    const openStarted = performance.now()
    const opened = await second.call('browser_open', { url: `${site.url}/page` }, { key: admin })
    expect(opened.status, JSON.stringify(opened.body)).toBe(200)
    const openAnswered = performance.now()
    await new Promise((resolve) => setTimeout(resolve, 2_000))
    const closeStarted = performance.now()
    expect((await second.call('browser_close', { session_id: opened.body.session_id }, { key: admin })).status).toBe(
      200,
    )
    const closeAnswered = performance.now()
    // The other tenant's one call is its own.
    expect((await second.call('list_files', {}, { key: otherAdmin })).status).toBe(200)

    // Each instance writes its totals every 100 ms; either instance reads the sum.
    const expectedCalls = {
      write_file: { ok: 3 },
      read_file: { ok: 4, not_found: 1 },
      execute_command: { ok: 1 },
      http_fetch: { ok: 2 },
      browser_open: { ok: 1 },
      browser_close: { ok: 1 },
    }
    let day: Json
    const deadline = Date.now() + 10_000
    do {
      await new Promise((resolve) => setTimeout(resolve, 150))
      const read = await usage(first)
      expect(read.status, JSON.stringify(read.body)).toBe(200)
      day = read.body.days.at(-1)
    } while (!isDeepStrictEqual(day.calls, expectedCalls) && Date.now() < deadline)
    expect(day.day).toBe(today())
    expect(day.calls).toEqual(expectedCalls)
    // The command's own CPU time (the sandbox's cgroup counts a little more: the shell, python starting).
    expect(day.sandbox_cpu_seconds).toBeGreaterThanOrEqual(commandCpu * 0.9)
    expect(day.sandbox_cpu_seconds).toBeLessThanOrEqual(commandCpu * 1.1)
    expect(day.sandbox_peak_memory_bytes).toBeGreaterThan(1_000_000)
    expect(day.fetch_bytes_in).toBe(2 * pageBytes)
    expect(day.fetch_bytes_out).toBe(0)
    // The session lasted at least from the open's answer to the close's request, at most from the open's
    // request to the close's answer.
    const least = (closeStarted - openAnswered) / 1000
    const most = (closeAnswered - openStarted) / 1000
    expect(day.browser_session_seconds).toBeGreaterThanOrEqual(least * 0.9)
    expect(day.browser_session_seconds).toBeLessThanOrEqual(most * 1.1)
    // Tool seconds: the command alone is most of them, and no call took longer than its client waited.
    expect(day.tool_seconds).toBeGreaterThanOrEqual(slow.seconds * 0.9 - 0.5)
    expect(day.tool_seconds).toBeLessThanOrEqual(slow.seconds + most + 5)
    // What acme stores: three files of 1,000 bytes (and nothing of globex's).
    const read = await usage(second)
    expect(read.body.bytes_stored).toBe(3000)
    expect(read.body.days.at(-1).calls).toEqual(day.calls)

    const other = await usage(second, otherAdmin)
    expect(other.body).toMatchObject({ tenant: 'globex', bytes_stored: 0 })
    expect(other.body.days.at(-1).calls).toEqual({ list_files: { ok: 1 } })
  })

  it('answers days oldest first, seven by default, and refuses bad ranges, unknown queries and non-admin keys', async () => {
    const week = await usage(first)
    expect(week.body.days).toHaveLength(7)
    expect(week.body.days.map((entry: Json) => entry.day)).toEqual(
      [...week.body.days.map((entry: Json) => entry.day)].sort(),
    )
    const range = await usage(first, admin, '?from=2026-01-30&to=2026-02-02')
    expect(range.body.days.map((entry: Json) => entry.day)).toEqual([
      '2026-01-30',
      '2026-01-31',
      '2026-02-01',
      '2026-02-02',
    ])
    expect(range.body.days[0]).toMatchObject({ calls: {}, tool_seconds: 0 })
    for (const query of [
      '?from=2026-02-02&to=2026-01-30',
      '?from=2025-01-01&to=2026-01-01',
      '?from=2026-13-45',
      '?tenant=globex',
    ]) {
      const refused = await usage(first, admin, query)
      expect(refused.status, query).toBe(400)
      expect(refused.body.hint, query).toBeTruthy()
    }
    expect((await usage(first, reader)).status).toBe(403)
  })

  it('shows the instance’s own totals per tenant in /metrics', async () => {
    const metrics = await startTestServer({}, { fileKeys: keys, metrics: true })
    try {
      await metrics.call('write_file', { path: 'm.txt', content: 'z' }, { key: admin })
      await metrics.call('read_file', { path: 'm.txt' }, { key: admin })
      await metrics.call('read_file', { path: 'nope.txt' }, { key: admin })
      await metrics.call('list_files', {}, { key: otherAdmin })
      const scrape = async (key: string) =>
        (await fetch(`${metrics.url}/metrics`, { headers: { authorization: `Bearer ${key}` } })).text()
      const text = await scrape(admin)
      expect(text).toMatch(/toolport_tenant_calls_total\{tenant="acme",tool="read_file",outcome="ok"\} 1/)
      expect(text).toMatch(/toolport_tenant_calls_total\{tenant="acme",tool="read_file",outcome="not_found"\} 1/)
      expect(text).toMatch(/toolport_tenant_tool_seconds_total\{tenant="acme"\} \d/)
      // A key sees its own tenant's series only.
      expect(text).not.toContain('globex')
      const other = await scrape(otherAdmin)
      expect(other).toMatch(/toolport_tenant_calls_total\{tenant="globex",tool="list_files",outcome="ok"\} 1/)
      expect(other).not.toContain('acme')
    } finally {
      await metrics.stop()
    }
  })
})
