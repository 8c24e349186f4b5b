import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalWeb } from '../support/local-web'
import { startTestServer, type TestServer } from '../support/server'
import { startSourceUpstreams } from '../support/source-upstreams'

// Reference 002's lifecycle, as a tenant's admin drives it over HTTP: a plugin manifest PUT as written
// (no id: the URL names it), disabled and enabled again without uninstalling, its tools unavailable
// (503, why and since when) while it is off or gone, and back with their latest schema when it returns.
// Two instances on one bucket: a change made on one is live on the other.

const adminKey = 'life-admin-key-0123456789'
const userKey = 'life-user-key-0123456789'
const otherToolsKey = 'life-other-tools-key-0123456789'

let first: TestServer
let second: TestServer
let upstream: LocalWeb

const plugin = (
  extra: Record<string, unknown> = {},
  properties: Record<string, unknown> = { filePath: { type: 'string' } },
) => ({
  url: `${upstream.url}/rpc`,
  rpc: {
    methods: {
      excel_analyze: {
        description: 'Analyze an Excel file and return sheets and headers.',
        inputSchema: { type: 'object', properties, required: ['filePath'] },
      },
    },
  },
  aiTools: [{ name: 'sheet_analyze', method: 'excel_analyze', effect: 'read', description: 'Analyze a workbook.' }],
  ...extra,
})

// biome-ignore lint/suspicious/noExplicitAny: tests inspect arbitrary JSON
async function request(
  server: TestServer,
  method: string,
  path: string,
  key: string,
  body?: unknown,
): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await response.text()
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined }
}

async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 30_000
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

beforeAll(async () => {
  upstream = await startSourceUpstreams()
  const env = { TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${upstream.port}`, TOOLPORT_SOURCES_REFRESH_SECONDS: '1' }
  const fileKeys = [
    { tenant: 'acme', key: adminKey, admin: true },
    { tenant: 'acme', key: userKey },
    { tenant: 'acme', key: otherToolsKey, tools: ['read_file'] },
  ]
  first = await startTestServer(env, { fileKeys })
  second = await startTestServer(env, { fileKeys, storage: first.storage })
})
afterAll(async () => {
  await first?.stop()
  await second?.stop()
  await upstream?.stop()
})

describe('a plugin registered, disabled, enabled and removed', () => {
  it('takes the manifest as written, its id from the URL', async () => {
    const put = await request(first, 'PUT', '/v1/sources/sheets', adminKey, plugin())
    expect(put.status, JSON.stringify(put.body)).toBe(201)
    expect(put.body).toMatchObject({ id: 'sheets', kind: 'http', status: 'ready', enabled: true, supports_ai: true })
    const called = await request(first, 'POST', '/v1/tools/sheet_analyze', userKey, { filePath: 'q3.xlsx' })
    expect(called.status).toBe(200)
  })

  it('is disabled without uninstalling: its tools leave the catalog and answer 503 with why and since when, on every instance', async () => {
    const before = await request(second, 'GET', '/v1/tools', userKey)
    const off = await request(first, 'PATCH', '/v1/sources/sheets', adminKey, { enabled: false })
    expect(off.status, JSON.stringify(off.body)).toBe(200)
    expect(off.body).toMatchObject({ id: 'sheets', status: 'disabled', enabled: false, tools: [] })
    for (const server of [first, second]) {
      await eventually(
        async () =>
          (await request(server, 'POST', '/v1/tools/sheet_analyze', userKey, { filePath: 'x' })).status === 503,
        'the tool unavailable',
      )
      const call = await request(server, 'POST', '/v1/tools/sheet_analyze', userKey, { filePath: 'x' })
      expect(call.body).toMatchObject({ code: 'unavailable', source: 'sheets', source_status: 'disabled' })
      expect(call.body.detail).toMatch(/unavailable since \d{4}-\d\d-\d\dT/)
      expect(call.headers.get('retry-after')).toBeTruthy()
      const listed = await request(server, 'GET', '/v1/tools', userKey)
      expect(listed.body.tools.map((tool: { name: string }) => tool.name)).not.toContain('sheet_analyze')
      expect(listed.body.unavailable).toEqual([
        expect.objectContaining({
          name: 'sheet_analyze',
          id: 'sheets:sheet_analyze',
          source: 'sheets',
          status: 'disabled',
        }),
      ])
      expect(listed.body.revision).not.toBe(before.body.revision)
    }
    // A key that could not call it is not told of it either.
    expect((await request(first, 'GET', '/v1/tools', otherToolsKey)).body.unavailable).toEqual([])
    // Still registered: the status says disabled.
    expect((await request(second, 'GET', '/v1/sources/sheets', adminKey)).body).toMatchObject({ status: 'disabled' })
  })

  it('comes back with its latest schema and a new revision', async () => {
    const ready = await request(first, 'GET', '/v1/tools', userKey)
    const was = (await request(first, 'PATCH', '/v1/sources/sheets', adminKey, { enabled: true })).body
    expect(was).toMatchObject({ status: 'ready', enabled: true, tools: ['sheet_analyze'] })
    const withFirstSchema = (await request(first, 'GET', '/v1/tools', userKey)).body
    const firstRevision = withFirstSchema.tools.find((tool: { name: string }) => tool.name === 'sheet_analyze').revision
    // Disabled again, its manifest replaced meanwhile (a new field), then enabled: the new schema is served.
    await request(first, 'PATCH', '/v1/sources/sheets', adminKey, { enabled: false })
    const replaced = await request(
      first,
      'PUT',
      '/v1/sources/sheets',
      adminKey,
      plugin(
        { enabled: false },
        {
          filePath: { type: 'string' },
          sheet: { type: 'string' },
        },
      ),
    )
    expect(replaced.body).toMatchObject({ status: 'disabled' })
    expect((await request(first, 'PATCH', '/v1/sources/sheets', adminKey, { enabled: true })).status).toBe(200)
    await eventually(
      async () =>
        (await request(second, 'POST', '/v1/tools/sheet_analyze', userKey, { filePath: 'x', sheet: 'A' })).status ===
        200,
      'served again on the other instance',
    )
    const now = (await request(second, 'GET', '/v1/tools', userKey)).body
    const tool = now.tools.find((entry: { name: string }) => entry.name === 'sheet_analyze')
    expect(Object.keys(tool.input_schema.properties)).toEqual(['filePath', 'sheet'])
    expect(tool.revision).not.toBe(firstRevision)
    expect(now.revision).not.toBe(ready.body.revision)
    expect(now.unavailable).toEqual([])
  })

  it('answers 503 naming the removal once removed, and serves it again when registered again', async () => {
    expect((await request(first, 'DELETE', '/v1/sources/sheets', adminKey)).status).toBe(204)
    const gone = await request(first, 'POST', '/v1/tools/sheet_analyze', userKey, { filePath: 'x' })
    expect(gone.status).toBe(503)
    expect(gone.body).toMatchObject({ source: 'sheets', source_status: 'removed' })
    expect((await request(first, 'GET', '/v1/tools', userKey)).body.unavailable).toEqual([
      expect.objectContaining({ name: 'sheet_analyze', status: 'removed' }),
    ])
    expect((await request(first, 'PUT', '/v1/sources/sheets', adminKey, plugin())).status).toBe(201)
    expect((await request(first, 'POST', '/v1/tools/sheet_analyze', userKey, { filePath: 'x' })).status).toBe(200)
  })

  it('refuses what PATCH cannot do, naming why', async () => {
    const unknown = await request(first, 'PATCH', '/v1/sources/nothing', adminKey, { enabled: false })
    expect(unknown.status).toBe(404)
    const extra = await request(first, 'PATCH', '/v1/sources/sheets', adminKey, {
      enabled: false,
      url: 'https://x.example',
    })
    expect(extra.status).toBe(400)
    const wrong = await request(first, 'PATCH', '/v1/sources/sheets', adminKey, { enabled: 'no' })
    expect(wrong.status).toBe(400)
    expect((await request(first, 'PATCH', '/v1/sources/sheets', userKey, { enabled: false })).status).toBe(403)
    // Nothing changed.
    expect((await request(first, 'GET', '/v1/sources/sheets', adminKey)).body).toMatchObject({ status: 'ready' })
  })
})
