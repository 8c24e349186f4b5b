import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest'
import { buildWorker } from '../../scripts/build-targets.mjs'
import { startWranglerDev, type WranglerDev, WranglerUnavailable } from '../support/wrangler'

// The built Worker under `wrangler dev --local` (workerd, local R2), called over real HTTP.
const key = 'worker-test-key-0123456789'
let dev: WranglerDev | undefined
let unavailable: string | undefined
let outdir: string

beforeAll(async () => {
  outdir = await mkdtemp(join(tmpdir(), 'toolport-worker-build-'))
  await buildWorker({ outdir })
  try {
    dev = await startWranglerDev({
      workerDir: outdir,
      vars: {
        TOOLPORT_API_KEYS: `acme=${key}`,
        TOOLPORT_SIGNING_SECRET: 'worker-test-signing-secret-0123456789abcdef',
      },
    })
  } catch (error) {
    if (!(error instanceof WranglerUnavailable)) throw error
    unavailable = error.message
    console.warn(`SKIPPING the Workers tests: wrangler cannot start on this machine. ${unavailable}`)
  }
}, 150_000)

afterAll(async () => {
  await dev?.stop()
  if (outdir) await rm(outdir, { recursive: true, force: true })
})

function server(context: TestContext): WranglerDev {
  if (!dev) context.skip(`wrangler cannot start on this machine: ${unavailable}`)
  return dev as WranglerDev
}

async function call(
  base: string,
  tool: string,
  body: unknown,
  options: { workspace?: string; key?: string | null } = {},
) {
  const query = options.workspace ? `?workspace=${options.workspace}` : ''
  const response = await fetch(`${base}/v1/tools/${tool}${query}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(options.key === null ? {} : { authorization: `Bearer ${options.key ?? key}` }),
    },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  })
  return { status: response.status, type: response.headers.get('content-type'), body: await response.json() }
}

describe('Cloudflare Worker (wrangler dev, local R2)', () => {
  it('round-trips a file through R2 with write_file and read_file', async (context) => {
    const { url } = server(context)
    const written = await call(
      url,
      'write_file',
      { path: 'docs/hello.md', content: '# Hello from R2\n' },
      { workspace: 'edge' },
    )
    expect(written).toMatchObject({ status: 200, body: { path: 'docs/hello.md', created: true } })
    const read = await call(url, 'read_file', { path: 'docs/hello.md' }, { workspace: 'edge' })
    expect(read).toMatchObject({ status: 200, body: { content: '# Hello from R2\n', total_lines: 1 } })
    const listed = await call(url, 'list_files', { recursive: true }, { workspace: 'edge' })
    expect(listed.body.entries.map((entry: { path: string }) => entry.path)).toContain('docs/hello.md')
    const elsewhere = await call(url, 'read_file', { path: 'docs/hello.md' }, { workspace: 'other' })
    expect(elsewhere).toMatchObject({ status: 404, type: 'application/problem+json', body: { code: 'not_found' } })
  })

  it('lists only the tools that run in workerd in its OpenAPI document', async (context) => {
    const { url } = server(context)
    const document = await fetch(`${url}/openapi.json`, { signal: AbortSignal.timeout(15_000) }).then((r) => r.json())
    const paths = Object.keys(document.paths)
    expect(paths).toContain('/v1/tools/read_file')
    expect(paths).toContain('/v1/tools/http_fetch')
    expect(paths).toContain('/v1/tools/web_fetch')
    expect(paths).not.toContain('/v1/tools/execute_command')
    expect(paths).not.toContain('/v1/tools/system_info')
    const shell = await call(url, 'execute_command', { command: 'ls' })
    expect(shell).toMatchObject({ status: 404, body: { code: 'not_found' } })
  })

  it('requires the key and refuses private addresses in http_fetch', async (context) => {
    const { url } = server(context)
    const anonymous = await call(url, 'read_file', { path: 'x' }, { key: null })
    expect(anonymous).toMatchObject({
      status: 401,
      type: 'application/problem+json',
      body: { code: 'unauthenticated' },
    })
    for (const target of ['http://10.0.0.1/', 'http://169.254.169.254/latest/meta-data/', 'http://[::1]:8080/']) {
      const refused = await call(url, 'http_fetch', { url: target })
      expect(refused, target).toMatchObject({ status: 403, body: { code: 'permission_denied' } })
    }
  })

  it('speaks MCP 2026-07-28 (SDK 2.x in workerd) and 2025-11-25 on /mcp', async (context) => {
    const { url } = server(context)
    const envelope = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'worker-test', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    }
    const post = (body: unknown, headers: Record<string, string>) =>
      fetch(`${url}/mcp?workspace=edge-mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(15_000),
      }).then((response) => response.json())
    const modern = { 'mcp-protocol-version': '2026-07-28' }
    const discovered = await post(
      { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope } },
      { ...modern, 'mcp-method': 'server/discover' },
    )
    expect(discovered.result.supportedVersions).toEqual(['2026-07-28'])
    const listed = await post(
      { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: envelope } },
      { ...modern, 'mcp-method': 'tools/list' },
    )
    expect(listed.result.tools.map((tool: { name: string }) => tool.name)).toContain('read_file')
    const legacy = await post(
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'old', version: '1' } },
      },
      {},
    )
    expect(legacy.result.protocolVersion).toBe('2025-11-25')
  })

  it('serves the API reference assets from the static assets folder', async (context) => {
    const { url } = server(context)
    const css = await fetch(`${url}/docs/assets/swagger-ui.css`, { signal: AbortSignal.timeout(15_000) })
    expect(css.status).toBe(200)
    expect(css.headers.get('content-type')).toMatch(/^text\/css/)
    await css.arrayBuffer()
  })

  it('runs an async write_file job through the Queue consumer to succeeded', async (context) => {
    const { url } = server(context)
    const submitted = await fetch(`${url}/v1/tools/write_file?workspace=queued&async=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ path: 'from-queue.txt', content: 'run by the consumer\n' }),
      signal: AbortSignal.timeout(15_000),
    })
    expect(submitted.status).toBe(202)
    const job = (await submitted.json()) as { job_id: string; status: string }
    expect(job.status).toBe('queued')
    let view: { status: string; attempt?: number; max_attempts?: number; result?: unknown } = { status: 'queued' }
    for (let poll = 0; poll < 150 && !['succeeded', 'failed'].includes(view.status); poll++) {
      await new Promise((resolve) => setTimeout(resolve, 200))
      const response = await fetch(`${url}/v1/jobs/${job.job_id}`, {
        headers: { authorization: `Bearer ${key}` },
        signal: AbortSignal.timeout(15_000),
      })
      view = await response.json()
    }
    expect(view).toMatchObject({ status: 'succeeded', attempt: 1, max_attempts: 3, result: { path: 'from-queue.txt' } })
    const read = await call(url, 'read_file', { path: 'from-queue.txt' }, { workspace: 'queued' })
    expect(read).toMatchObject({ status: 200, body: { content: 'run by the consumer\n' } })
  })
})
