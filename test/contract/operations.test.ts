import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseRateLimit } from '../../src/http/middleware/rate-limit'
import { watchListening } from '../support/listening'
import { startTestServer } from '../support/server'

describe('rate limits (TOOLPORT_RATE_LIMIT)', () => {
  it('parses COUNT/UNIT', () => {
    expect(parseRateLimit('60/min')).toEqual({ count: 60, windowSeconds: 60 })
    expect(parseRateLimit('10/s')).toEqual({ count: 10, windowSeconds: 1 })
    expect(parseRateLimit('1000 / hour')).toEqual({ count: 1000, windowSeconds: 3600 })
    for (const bad of ['0/min', 'ten/min', '5/day', '5', '']) expect(parseRateLimit(bad), bad).toBeUndefined()
  })

  it('answers 429 with Retry-After and RateLimit headers past the limit, per key', async () => {
    const server = await startTestServer({
      TOOLPORT_RATE_LIMIT: '3/min',
      TOOLPORT_API_KEYS: 'a=key-a-0123456789abcdef,b=key-b-0123456789abcdef',
    })
    try {
      const statuses: number[] = []
      let last: Awaited<ReturnType<typeof server.call>> | undefined
      for (let index = 0; index < 4; index++) {
        last = await server.call('list_files', {}, { key: 'key-a-0123456789abcdef' })
        statuses.push(last.status)
      }
      expect(statuses).toEqual([200, 200, 200, 429])
      expect(last?.body).toMatchObject({ code: 'rate_limited', status: 429 })
      expect(Number(last?.headers.get('retry-after'))).toBeGreaterThan(0)
      expect(last?.headers.get('ratelimit-limit')).toBe('3')
      expect(last?.headers.get('ratelimit-remaining')).toBe('0')
      // Another key has its own budget.
      expect((await server.call('list_files', {}, { key: 'key-b-0123456789abcdef' })).status).toBe(200)
    } finally {
      await server.stop()
    }
  })
})

describe('CORS', () => {
  it('is closed by default: no Access-Control headers, even on preflight', async () => {
    const server = await startTestServer()
    try {
      const preflight = await fetch(`${server.url}/v1/tools/read_file`, {
        method: 'OPTIONS',
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
      })
      expect(preflight.headers.get('access-control-allow-origin')).toBeNull()
      const call = await fetch(`${server.url}/v1/tools`, { headers: { origin: 'https://evil.example' } })
      expect(call.headers.get('access-control-allow-origin')).toBeNull()
    } finally {
      await server.stop()
    }
  })

  it('allows exactly the configured origins', async () => {
    const server = await startTestServer({ TOOLPORT_CORS_ORIGINS: 'https://app.example.com' })
    try {
      const allowed = await fetch(`${server.url}/v1/tools`, { headers: { origin: 'https://app.example.com' } })
      expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example.com')
      const other = await fetch(`${server.url}/v1/tools`, { headers: { origin: 'https://evil.example' } })
      expect(other.headers.get('access-control-allow-origin')).toBeNull()
    } finally {
      await server.stop()
    }
  })
})

const root = new URL('../..', import.meta.url).pathname

describe('metrics and graceful shutdown of the built service', () => {
  let dataDir: string
  let child: ChildProcess
  let url: string
  let service: ReturnType<typeof watchListening>

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'toolport-ops-'))
    await promisify(execFile)(process.execPath, ['scripts/build.mjs'], { cwd: root })
    child = spawn(process.execPath, ['dist/node.js'], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '',
        TOOLPORT_DATA_DIR: dataDir,
        TOOLPORT_WORK_DIR: join(dataDir, 'work'),
        PORT: '0',
        TOOLPORT_SANDBOX: 'none',
        TOOLPORT_SHUTDOWN_GRACE_SECONDS: '10',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    service = watchListening(child)
    url = await service.url
  })
  afterAll(async () => {
    if (child.exitCode === null) child.kill('SIGKILL')
    await rm(dataDir, { recursive: true, force: true })
  })

  it('exposes Prometheus metrics of calls by tool and outcome', async () => {
    const post = (tool: string, body: unknown) =>
      fetch(`${url}/v1/tools/${tool}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    await post('write_file', { path: 'a.txt', content: 'x' })
    await post('read_file', { path: 'missing.txt' })
    const metrics = await fetch(`${url}/metrics`)
    expect(metrics.headers.get('content-type')).toContain('text/plain')
    const text = await metrics.text()
    expect(text).toMatch(/toolport_tool_calls_total\{tool="write_file",source="builtin",outcome="ok"\} 1/)
    expect(text).toMatch(/toolport_tool_calls_total\{tool="read_file",source="builtin",outcome="not_found"\} 1/)
    expect(text).toContain('toolport_tool_call_duration_seconds_bucket')
    expect(text).toContain('toolport_sandbox_runs{state="active"} 0')
  })

  it('answers a request it cannot route (no Host, a Host with a space, OPTIONS *) with problem+json', async () => {
    const { port } = new URL(url)
    const exchange = (head: string) =>
      new Promise<string>((resolve, reject) => {
        let answer = ''
        const socket = connect(Number(port), '127.0.0.1', () => socket.write(head))
        socket.on('data', (chunk) => {
          answer += chunk.toString()
        })
        socket.on('end', () => resolve(answer))
        socket.on('error', reject)
      })
    for (const head of [
      'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n',
      'GET /healthz HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n',
      'OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
    ]) {
      const answer = await exchange(head)
      expect(answer, head).toMatch(/^HTTP\/1\.1 400 /)
      expect(answer, head).toMatch(/content-type: application\/problem\+json/i)
      const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))
      expect(body).toMatchObject({ status: 400, code: 'validation' })
      expect(body.hint).toBeTruthy()
    }
  })

  it('a client that closes its connection mid-body is no internal error: no 500, no error log line', async () => {
    const { port } = new URL(url)
    for (const framing of ['Content-Length: 1000', 'Transfer-Encoding: chunked']) {
      await new Promise<void>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () => {
          const start = framing.startsWith('Transfer') ? '9\r\n{"path":"a' : '{"path":"a'
          socket.write(
            `POST /v1/tools/read_file HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${framing}\r\n\r\n${start}`,
          )
          setTimeout(() => socket.destroy(), 200)
        })
        socket.on('close', () => resolve())
        socket.on('error', reject)
      })
    }
    // The error handler runs once the server sees the close.
    await new Promise((resolve) => setTimeout(resolve, 300))
    const text = await (await fetch(`${url}/metrics`)).text()
    expect(text).not.toMatch(/toolport_tool_calls_total\{tool="read_file",source="builtin",outcome="internal"\}/)
    expect(service.output()).not.toMatch(/"level":"error"[^\n]*aborted|unhandled error/)
  })

  it('what the deployment does not offer (no search provider) is a 503 for the caller, not an error in the log', async () => {
    const response = await fetch(`${url}/v1/tools/web_search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'toolport' }),
    })
    expect(response.status).toBe(503)
    expect((await response.json()).detail).toMatch(/No web search provider/)
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(service.output()).not.toMatch(/"level":"error"[^\n]*No web search provider/)
    expect(service.output()).toMatch(/"tool":"web_search"/)
  })

  it('logs JSON lines with request id, tool, tenant and outcome, and never the file contents', () => {
    const lines = service
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line))
    const write = lines.find((line) => line.msg === 'request' && line.tool === 'write_file')
    expect(write).toMatchObject({ level: 'info', status: 200, tenant: 'default', method: 'POST' })
    expect(write.request_id).toMatch(/^[0-9a-f-]{36}$/)
    expect(typeof write.duration_ms).toBe('number')
  })

  it('on SIGTERM lets a call in flight finish and exits 0', async () => {
    const inFlight = fetch(`${url}/v1/tools/write_file`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new ReadableStream({
        async start(controller) {
          controller.enqueue(new TextEncoder().encode('{"path":"slow.txt",'))
          await new Promise((resolve) => setTimeout(resolve, 800))
          controller.enqueue(new TextEncoder().encode('"content":"done"}'))
          controller.close()
        },
      }),
      duplex: 'half',
    } as RequestInit)
    await new Promise((resolve) => setTimeout(resolve, 200))
    child.kill('SIGTERM')
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    const response = await inFlight
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ path: 'slow.txt' })
    expect(await exited).toBe(0)
    expect(service.output()).toContain('shutting down')
    // Checksum pass: the call that finished during the drain is on disk, whole.
    const stored = await readFile(join(dataDir, 'tenants/default/workspaces/default/slow.txt'), 'utf8')
    expect(stored).toBe('done')
  })
})

describe('draining', () => {
  it('answers new calls with 503 unavailable and Retry-After while the service shuts down', async () => {
    const { createApp } = await import('../../src/app')
    const { loadConfig } = await import('../../src/config/config')
    const { silentLogger } = await import('../../src/core/logger')
    const { createMemoryStorage } = await import('../../src/storage/memory')
    const { toolNames } = await import('../../src/tools/builtins')
    let draining = false
    const { app } = createApp({
      config: loadConfig({}, { toolNames }),
      storage: createMemoryStorage(),
      log: silentLogger,
      lifecycle: { draining: () => draining },
    })
    const call = () =>
      app.request('/v1/tools/list_files', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      })
    expect((await call()).status).toBe(200)
    draining = true
    const refused = await call()
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('5')
    expect(await refused.json()).toMatchObject({ code: 'unavailable' })
  })
})
