import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createS3Storage } from '../../src/storage/s3'
import { toolNames } from '../../src/tools/builtins'
import { startTestServer, type TestServer } from '../support/server'

let server: TestServer

beforeAll(async () => {
  server = await startTestServer({ TOOLPORT_MAX_BODY_BYTES: '65536' })
})
afterAll(async () => {
  await server.stop()
})

function expectProblem(
  result: { status: number; headers: Headers; body: Record<string, unknown> },
  status: number,
  code: string,
) {
  expect(result.status).toBe(status)
  expect(result.headers.get('content-type')).toBe('application/problem+json')
  expect(result.body).toMatchObject({ status, code, type: `urn:toolport:problem:${code}` })
  expect(typeof result.body.title).toBe('string')
  expect(typeof result.body.detail).toBe('string')
  expect(typeof result.body.hint).toBe('string')
  expect((result.body.hint as string).length).toBeGreaterThan(10)
}

/** One request over a fresh socket, bytes exactly as given; resolves with everything the server sent. */
function rawHttp(request: string): Promise<string> {
  const { hostname, port } = new URL(server.url)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname)
    let received = ''
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1')
    })
    socket.on('error', (error) => (received ? resolve(received) : reject(error)))
    socket.on('close', () => resolve(received))
    socket.write(request)
  })
}

async function raw(path: string, init: RequestInit = {}) {
  const response = await fetch(`${server.url}${path}`, init)
  const text = await response.text()
  let body: Record<string, unknown> = {}
  try {
    body = JSON.parse(text)
  } catch {}
  return { status: response.status, headers: response.headers, body, text }
}

describe('client mistakes get problem+json, never a 500', () => {
  it('unknown tool: 404 with a hint pointing at the catalog', async () => {
    const result = await server.call('no_such_tool', {})
    expectProblem(result, 404, 'not_found')
    expect(result.body.hint).toContain('/v1/tools')
  })

  it('wrong method on a tool: 405 with Allow: POST', async () => {
    const result = await raw('/v1/tools/read_file')
    expectProblem(result, 405, 'method_not_allowed')
    expect(result.headers.get('allow')).toBe('POST')
  })

  it('another method on any route that exists: 405 naming the methods it takes; no route at all: 404', async () => {
    for (const [method, path, allow] of [
      ['POST', '/healthz', 'GET'],
      ['DELETE', '/v1/tools', 'GET'],
      ['POST', '/v1/jobs/00000000-0000-4000-8000-000000000000', 'GET, DELETE'],
      ['PUT', '/openapi.json', 'GET'],
    ] as const) {
      const response = await fetch(`${server.url}${path}`, { method })
      expect(response.status, `${method} ${path}`).toBe(405)
      expect(response.headers.get('allow'), `${method} ${path}`).toBe(allow)
      expect((await response.json()).code).toBe('method_not_allowed')
    }
    const missing = await fetch(`${server.url}/v1/nothing-here`)
    expect(missing.status).toBe(404)
    expect((await missing.json()).code).toBe('not_found')
    // A route of the very method that finds nothing stays a 404 (an unknown docs asset, a job).
    expect((await fetch(`${server.url}/docs/assets/package.json`)).status).toBe(404)
    expect((await fetch(`${server.url}/v1/jobs/00000000-0000-4000-8000-000000000000`)).status).toBe(404)
  })

  it('malformed JSON: 400 validation', async () => {
    expectProblem(await server.call('read_file', '{"path": '), 400, 'validation')
  })

  it('a body that is not an object: 400 naming the problem', async () => {
    for (const body of ['null', '[]', '"text"', '42', 'true']) {
      expectProblem(await server.call('read_file', body), 400, 'validation')
    }
  })

  it('schema violations name the field', async () => {
    const wrongType = await server.call('read_file', { path: 42 })
    expectProblem(wrongType, 400, 'validation')
    expect(wrongType.body.field).toBe('path')
    expect(wrongType.body.hint).toContain('"path"')
    const missing = await server.call('read_file', {})
    expect(missing.body.field).toBe('path')
    const range = await server.call('read_file', { path: 'a', start_line: 0 })
    expect(range.body.field).toBe('start_line')
    const nested = await server.call('multi_edit', { path: 'a', edits: [{ old_text: 'a', new_text: 5 }] })
    expect(nested.body.field).toBe('edits.0.new_text')
  })

  it('a body that is not JSON: 415 with a hint about Content-Type', async () => {
    const result = await raw('/v1/tools/read_file', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'path=a.txt',
    })
    expectProblem(result, 415, 'unsupported_media_type')
    expect(result.body.hint).toContain('application/json')
  })

  it('a body over the limit: 413 size_exceeded, also when chunked without a length', async () => {
    const big = JSON.stringify({ path: 'a.txt', content: 'x'.repeat(70_000) })
    expectProblem(await server.call('write_file', big), 413, 'size_exceeded')
    const chunked = await raw('/v1/tools/write_file', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(big))
          controller.close()
        },
      }),
      duplex: 'half',
    } as RequestInit)
    expectProblem(chunked, 413, 'size_exceeded')
    expect((await server.call('read_file', { path: 'a.txt' })).status).toBe(404)
  })

  // The limit is decided on Content-Length without reading the body (as hono's bodyLimit does once
  // it has a length): check the edges over a raw socket, where the client controls every byte.
  it('a body exactly at the limit is read; one byte more is 413; a body cannot outrun its Content-Length', async () => {
    const limit = 65536
    const sized = (bytes: number) => {
      const shell = JSON.stringify({ path: 'edge.txt', content: '' })
      return JSON.stringify({ path: 'edge.txt', content: 'x'.repeat(bytes - shell.length) })
    }
    const post = (body: string, length = Buffer.byteLength(body)) =>
      rawHttp(
        `POST /v1/tools/write_file HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n${body}`,
      )
    expect(await post(sized(limit))).toMatch(/^HTTP\/1\.1 200 /)
    const shellBytes = JSON.stringify({ path: 'edge.txt', content: '' }).length
    expect((await server.call('read_file', { path: 'edge.txt' })).body.content).toHaveLength(limit - shellBytes)
    const over = await post(sized(limit + 1))
    expect(over).toMatch(/^HTTP\/1\.1 413 /)
    expect(over).toContain('"code":"size_exceeded"')
    // Declares 30 bytes and sends 70,000: only the declared bytes are the body, the rest is garbage
    // for the parser, so nothing over the limit is ever written.
    const outrun = await post(sized(70_000).replace('edge.txt', 'outrun.txt'), 30)
    expect(outrun).not.toMatch(/^HTTP\/1\.1 200 /)
    expect((await server.call('read_file', { path: 'outrun.txt' })).status).toBe(404)
  })

  it('invalid workspace ids: 400 naming the workspace parameter', async () => {
    for (const workspace of ['..', '.', '...', 'a/b', 'a b', '', 'x'.repeat(65), '%2e%2e', 'é']) {
      const result = await server.call('list_files', {}, { workspace })
      if (workspace === '') {
        expect(result.status).toBe(400)
        continue
      }
      expectProblem(result, 400, 'validation')
      expect(result.body.field).toBe('workspace')
    }
  })

  it('unknown routes: 404 problem', async () => {
    expectProblem(await raw('/v2/whatever'), 404, 'not_found')
  })

  it('prototype-pollution keys are refused as unknown fields, never merged', async () => {
    const result = await server.call(
      'write_file',
      '{"path":"proto.txt","content":"ok","__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}',
    )
    expect(result.status).toBe(400)
    expect(result.body).toMatchObject({ code: 'validation', field: '__proto__' })
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect((await server.call('read_file', { path: 'proto.txt' })).status).toBe(404)
  })
})

describe('request ids', () => {
  it('echoes a well-formed X-Request-Id and generates one otherwise', async () => {
    const echoed = await raw('/healthz', { headers: { 'x-request-id': 'abc-123' } })
    expect(echoed.headers.get('x-request-id')).toBe('abc-123')
    const generated = await raw('/healthz', { headers: { 'x-request-id': 'bad id\twith spaces' } })
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    const problem = await server.call('read_file', {}, { headers: { 'x-request-id': 'req-7' } })
    expect(problem.body.request_id).toBe('req-7')
    expect(problem.headers.get('x-request-id')).toBe('req-7')
  })

  it('keyed answers say no-store, with their request id and nosniff, over HTTP as in process', async () => {
    await server.call('write_file', { path: 'store.txt', content: 'no-store' })
    const overHttp = [
      await server.call('read_file', { path: 'store.txt' }, { headers: { 'x-request-id': 'http-1' } }),
      await server.call('read_file', { path: 'absent.txt' }, { headers: { 'x-request-id': 'http-2' } }),
      await server.call(
        'read_file',
        { path: 'store.txt' },
        { headers: { 'x-request-id': 'http-3', accept: 'text/event-stream' } },
      ),
    ]
    expect(overHttp.map((answer) => answer.status)).toEqual([200, 404, 200])
    expect(overHttp[2]?.headers.get('content-type')).toMatch(/^text\/event-stream/)
    // In process there is no Node response under the request: the same headers go through Hono.
    const { createApp } = await import('../../src/app')
    const { loadConfig } = await import('../../src/config/config')
    const { silentLogger } = await import('../../src/core/logger')
    const { createMemoryStorage } = await import('../../src/storage/memory')
    const { app } = createApp({
      config: loadConfig({}, { toolNames }),
      storage: createMemoryStorage(),
      log: silentLogger,
    })
    const inProcess = await Promise.all(
      ['list_files', 'read_file'].map((tool, index) =>
        app.request(`/v1/tools/${tool}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-request-id': `app-${index + 1}` },
          body: tool === 'read_file' ? '{"path":"absent.txt"}' : '{}',
        }),
      ),
    )
    expect(inProcess.map((answer) => answer.status)).toEqual([200, 404])
    for (const [index, answer] of [...overHttp, ...inProcess].entries()) {
      // A header the route sets itself wins: the event stream's own no-cache.
      expect(answer.headers.get('cache-control'), `answer ${index}`).toBe(index === 2 ? 'no-cache' : 'no-store')
      expect(answer.headers.get('x-content-type-options'), `answer ${index}`).toBe('nosniff')
      expect(answer.headers.get('x-request-id'), `answer ${index}`).toBe(
        index < overHttp.length ? `http-${index + 1}` : `app-${index - overHttp.length + 1}`,
      )
    }
  })

  it('every answer carries its request id and nosniff: tool results, problems, unknown routes', async () => {
    await server.call('write_file', { path: 'ids.txt', content: 'ids' })
    const answers = [
      await server.call('read_file', { path: 'ids.txt' }, { headers: { 'x-request-id': 'ok-1' } }),
      await server.call('read_file', { path: 'missing.txt' }, { headers: { 'x-request-id': 'missing-1' } }),
      await server.call('read_file', '{"path":', { headers: { 'x-request-id': 'bad-json-1' } }),
      await server.call('no_such_tool', {}, { headers: { 'x-request-id': 'unknown-1' } }),
    ]
    expect(answers.map((answer) => answer.status)).toEqual([200, 404, 400, 404])
    expect(answers.map((answer) => answer.headers.get('x-request-id'))).toEqual([
      'ok-1',
      'missing-1',
      'bad-json-1',
      'unknown-1',
    ])
    for (const answer of answers) expect(answer.headers.get('x-content-type-options')).toBe('nosniff')
    expect((await raw('/v2/whatever', { headers: { 'x-request-id': 'route-1' } })).headers.get('x-request-id')).toBe(
      'route-1',
    )
  })
})

describe('catalog, OpenAPI, docs and health', () => {
  it('GET /v1/tools lists every tool with schemas, effects and a revision', async () => {
    const result = await raw('/v1/tools')
    expect(result.status).toBe(200)
    const catalog = result.body as { revision: string; tools: Array<Record<string, unknown>> }
    expect(catalog.revision).toMatch(/^[0-9a-f]{16}$/)
    // The catalog serves the code's one explicit list, in its order.
    expect(catalog.tools.map((tool) => tool.name)).toEqual([...toolNames])
    expect(toolNames).toEqual(
      expect.arrayContaining(['read_file', 'write_file', 'execute_command', 'http_fetch', 'get_env']),
    )
    const readFile = catalog.tools[0] as { effect: string; input_schema: { required: string[]; properties: object } }
    expect(readFile.effect).toBe('read')
    expect(readFile.input_schema.required).toEqual(['path'])
    expect(Object.keys(readFile.input_schema.properties)).toEqual(['path', 'start_line', 'end_line'])
    expect(catalog.tools.find((tool) => tool.name === 'delete_file')?.effect).toBe('destructive')
    expect((await raw('/v1/tools')).body.revision).toBe(catalog.revision)
  })

  it('GET /openapi.json is OpenAPI 3.1 with one operation per tool, bearer security and x-effect', async () => {
    // biome-ignore lint/suspicious/noExplicitAny: walking an arbitrary JSON document
    const document: any = (await raw('/openapi.json')).body
    expect(document.openapi).toBe('3.1.0')
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' })
    expect(document.servers[0].url).toMatch(/^http:\/\/127\.0\.0\.1:/)
    const operation = document.paths['/v1/tools/read_file'].post
    expect(operation.operationId).toBe('read_file')
    expect(operation['x-effect']).toBe('read')
    expect(operation['x-openai-isConsequential']).toBe(false)
    expect(operation.security).toEqual([{ bearerAuth: [] }])
    expect(operation.requestBody.content['application/json'].schema.properties.path.type).toBe('string')
    expect(operation.responses['400'].content['application/problem+json']).toBeDefined()
    expect(
      operation.parameters.map((parameter: { name: string; in: string }) => `${parameter.in}:${parameter.name}`),
    ).toEqual(['query:workspace', 'query:async', 'query:callback_url'])
    expect(document.paths['/v1/tools/delete_file'].post['x-openai-isConsequential']).toBe(true)
  })

  it('GET /docs serves an offline API reference with its own assets', async () => {
    const page = await raw('/docs')
    expect(page.status).toBe(200)
    expect(page.text).toContain('/docs/assets/swagger-ui-bundle.js')
    expect(page.text).not.toMatch(/https?:\/\/(?!127)/)
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'")
    const init = await raw('/docs/init.js')
    expect(init.text).toContain('/openapi.json')
  })

  it('/healthz and /readyz report status', async () => {
    expect((await raw('/healthz')).body).toEqual({ status: 'ok' })
    const ready = await raw('/readyz')
    expect(ready.status).toBe(200)
    expect(ready.body).toMatchObject({ status: 'ready', checks: { storage: { status: 'ok', driver: 'fs' } } })
  })
})

describe('TOOLPORT_TOOLS', () => {
  it('enables only the named tools; the others are 404 and absent from the catalog and OpenAPI', async () => {
    const subset = await startTestServer({ TOOLPORT_TOOLS: 'read_file, list_files' })
    try {
      const catalog = await fetch(`${subset.url}/v1/tools`).then((response) => response.json())
      expect(catalog.tools.map((tool: { name: string }) => tool.name)).toEqual([
        'read_file',
        'list_files',
        'get_job',
        'cancel_job',
      ])
      expect((await subset.call('write_file', { path: 'a', content: 'b' })).status).toBe(404)
      const document = await fetch(`${subset.url}/openapi.json`).then((response) => response.json())
      expect(Object.keys(document.paths).sort()).toEqual([
        '/v1/approvals',
        '/v1/approvals/{id}',
        '/v1/jobs/{id}',
        '/v1/tools/list_files',
        '/v1/tools/read_file',
      ])
    } finally {
      await subset.stop()
    }
  })
})

describe('public URL and storage outages', () => {
  it('TOOLPORT_PUBLIC_URL becomes the OpenAPI server', async () => {
    const behindProxy = await startTestServer({ TOOLPORT_PUBLIC_URL: 'https://tools.example.com/' })
    try {
      const document = await fetch(`${behindProxy.url}/openapi.json`).then((response) => response.json())
      expect(document.servers).toEqual([{ url: 'https://tools.example.com' }])
    } finally {
      await behindProxy.stop()
    }
  })

  it('answers 503 unavailable with Retry-After, and /readyz 503, when storage cannot be reached', async () => {
    // Port 1 on loopback: nothing listens there, so every S3 request is refused at once.
    const storage = createS3Storage({
      bucket: 'gone',
      endpoint: 'http://127.0.0.1:1',
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
      maxAttempts: 1,
    })
    const broken = await startTestServer({}, { storage })
    try {
      const read = await broken.call('read_file', { path: 'a.txt' })
      expect(read.status).toBe(503)
      expect(read.body).toMatchObject({ code: 'unavailable', status: 503 })
      expect(read.headers.get('retry-after')).toBe('5')
      expect(JSON.stringify(read.body)).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|gone/)
      const ready = await fetch(`${broken.url}/readyz`)
      expect(ready.status).toBe(503)
      expect(await ready.json()).toMatchObject({
        status: 'not_ready',
        checks: { storage: { status: 'error', driver: 's3' } },
      })
    } finally {
      await broken.stop()
    }
  })
})

describe('response size', () => {
  it('cuts a long listing under 100,000 characters with truncated and a hint', async () => {
    const name = 'n'.repeat(200)
    await Promise.all(
      Array.from({ length: 600 }, (_, index) =>
        server.storage.put(`tenants/default/workspaces/wide/${name}-${String(index).padStart(4, '0')}.txt`, 'x'),
      ),
    )
    const response = await fetch(`${server.url}/v1/tools/list_files?workspace=wide`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ limit: 10_000 }),
    })
    const text = await response.text()
    expect(response.status).toBe(200)
    expect(text.length).toBeLessThanOrEqual(100_000)
    const body = JSON.parse(text)
    expect(body.truncated).toBe(true)
    expect(body.entries.length).toBeGreaterThan(100)
    expect(body.entries.length).toBeLessThan(600)
    expect(body.hint).toMatch(/subfolder|glob/)
  })
})
