import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createLambdaApp,
  createLambdaHandler,
  createStreamingHandler,
  type StreamingHandler,
} from '../../src/runtimes/lambda-service'
import { type EventRequest, type EventShape, lambdaEvent } from '../support/lambda-events'
import { type S3rverInstance, s3rverCredentials, s3rverEnv, startS3rver } from '../support/s3rver'

// The handler exactly as src/runtimes/lambda.ts exports it, fed recorded event shapes, on s3rver.
const key = 'lambda-test-key-0123456789'
const otherKey = 'lambda-other-key-0123456789'
let s3: S3rverInstance
let scratch: string
let invoke: (shape: EventShape, request: EventRequest) => Promise<LambdaResult>
const savedEnv = { ...process.env }

interface LambdaResult {
  statusCode: number
  body: string
  isBase64Encoded: boolean
  headers?: Record<string, string>
  multiValueHeaders?: Record<string, string[]>
}

function lambdaEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    ...s3rverEnv(s3),
    TOOLPORT_API_KEYS: `tenant-a=${key},tenant-b=${otherKey}`,
    TOOLPORT_SIGNING_SECRET: 'lambda-test-signing-secret-0123456789abcdef',
    TOOLPORT_DATA_DIR: join(scratch, 'data'),
    TOOLPORT_WORK_DIR: join(scratch, 'work'),
    TOOLPORT_LOG_LEVEL: 'silent',
    ...extra,
  }
}

function header(result: LambdaResult, name: string): string | undefined {
  return result.headers?.[name] ?? result.multiValueHeaders?.[name]?.[0]
}

function json(result: LambdaResult) {
  return JSON.parse(result.isBase64Encoded ? Buffer.from(result.body, 'base64').toString('utf8') : result.body)
}

beforeAll(async () => {
  s3 = await startS3rver()
  scratch = await mkdtemp(join(tmpdir(), 'toolport-lambda-'))
  // What Lambda puts in the environment: the SDK's default credential chain reads it.
  process.env.AWS_ACCESS_KEY_ID = s3rverCredentials.accessKeyId
  process.env.AWS_SECRET_ACCESS_KEY = s3rverCredentials.secretAccessKey
  // The process executor and the workspace copies go below TMPDIR: watch that folder.
  process.env.TMPDIR = join(scratch, 'tmp')
  await import('node:fs/promises').then((fs) => fs.mkdir(process.env.TMPDIR as string))
  const lambda = createLambdaApp(lambdaEnv())
  await lambda.ready
  const handler = createLambdaHandler(lambda)
  invoke = (shape, request) => handler(lambdaEvent(shape, { key, ...request }), {} as never) as Promise<LambdaResult>
})

afterAll(async () => {
  process.env = savedEnv
  await s3?.stop()
  if (scratch) await rm(scratch, { recursive: true, force: true })
})

describe('Lambda handler with recorded events', () => {
  it('writes through API Gateway REST (v1) and reads back through HTTP API (v2) with a base64 body', async () => {
    const written = await invoke('api-gateway-rest-v1', {
      path: '/v1/tools/write_file',
      query: { workspace: 'rest-ws' },
      body: { path: 'notes/rest.txt', content: 'written through API Gateway REST' },
    })
    expect(written.statusCode).toBe(200)
    // A v1 event with multiValueHeaders gets multiValueHeaders back.
    expect(written.multiValueHeaders?.['content-type']).toEqual(['application/json'])
    expect(json(written)).toMatchObject({ path: 'notes/rest.txt', created: true, bytes_written: 32 })

    const read = await invoke('http-api-v2', {
      path: '/v1/tools/read_file',
      query: { workspace: 'rest-ws' },
      body: { path: 'notes/rest.txt' },
      base64: true,
    })
    expect(read.statusCode).toBe(200)
    expect(header(read, 'content-type')).toBe('application/json')
    expect(json(read)).toMatchObject({ path: 'notes/rest.txt', content: 'written through API Gateway REST' })
  })

  it('speaks MCP 2026-07-28 and 2025-11-25 on /mcp: discover, a tool call, a workspace resource', async () => {
    const envelope = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'lambda-test', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    }
    const modern = (method: string, params: Record<string, unknown>, name?: string) =>
      invoke('http-api-v2', {
        method: 'POST',
        path: '/mcp',
        query: { workspace: 'mcp-ws' },
        headers: {
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': method,
          ...(name ? { 'mcp-name': name } : {}),
        },
        body: { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: envelope } },
      })
    const discovered = json(await modern('server/discover', {}))
    expect(discovered.result.supportedVersions).toEqual(['2026-07-28'])
    const written = json(
      await modern(
        'tools/call',
        { name: 'write_file', arguments: { path: 'm.txt', content: 'on lambda' } },
        'write_file',
      ),
    )
    expect(written.result.structuredContent).toMatchObject({ path: 'm.txt', created: true })
    const read = json(
      await modern('resources/read', { uri: 'toolport://workspace/mcp-ws/m.txt' }, 'toolport://workspace/mcp-ws/m.txt'),
    )
    expect(read.result.contents).toEqual([
      { uri: 'toolport://workspace/mcp-ws/m.txt', mimeType: 'text/plain; charset=utf-8', text: 'on lambda' },
    ])
    const legacy = await invoke('api-gateway-rest-v1', {
      method: 'POST',
      path: '/mcp',
      headers: { accept: 'application/json, text/event-stream' },
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'old', version: '1' } },
      },
    })
    expect(json(legacy).result.protocolVersion).toBe('2025-11-25')
  })

  it('refuses browser sessions with a clear error: a session cannot outlive one invocation', async () => {
    const refused = await invoke('function-url', {
      path: '/v1/tools/browser_open',
      body: { url: 'https://example.com/' },
    })
    expect(refused.statusCode).toBe(503)
    expect(json(refused)).toMatchObject({ code: 'unavailable' })
    expect(json(refused).hint).toContain('Lambda')
  })

  it('keeps workspaces and tenants apart through the query string', async () => {
    await invoke('function-url', {
      path: '/v1/tools/write_file',
      query: { workspace: 'url-ws' },
      body: { path: 'a.txt', content: 'tenant a' },
    })
    const listed = await invoke('function-url', {
      path: '/v1/tools/list_files',
      query: { workspace: 'url-ws' },
      body: {},
    })
    expect(json(listed).entries.map((entry: { path: string }) => entry.path)).toEqual(['a.txt'])

    const elsewhere = await invoke('function-url', {
      path: '/v1/tools/read_file',
      query: { workspace: 'other-ws' },
      body: { path: 'a.txt' },
    })
    expect(elsewhere.statusCode).toBe(404)
    const otherTenant = await invoke('function-url', {
      path: '/v1/tools/read_file',
      query: { workspace: 'url-ws' },
      body: { path: 'a.txt' },
      key: otherKey,
    })
    expect(otherTenant.statusCode).toBe(404)
    expect(json(otherTenant)).toMatchObject({ code: 'not_found' })
  })

  it('answers problem+json for a missing key, bad JSON, a bad workspace and an unknown tool', async () => {
    const cases: Array<[EventShape, EventRequest, number, string]> = [
      ['function-url', { path: '/v1/tools/read_file', body: { path: 'x' }, key: null }, 401, 'unauthenticated'],
      ['api-gateway-rest-v1', { path: '/v1/tools/read_file', body: '{not json' }, 400, 'validation'],
      [
        'http-api-v2',
        { path: '/v1/tools/read_file', query: { workspace: '../etc' }, body: { path: 'x' } },
        400,
        'validation',
      ],
      ['function-url', { path: '/v1/tools/no_such_tool', body: {} }, 404, 'not_found'],
      [
        'api-gateway-rest-v1',
        { path: '/v1/tools/read_file', query: { workspace: 'rest-ws' }, body: { path: 'missing.txt' } },
        404,
        'not_found',
      ],
    ]
    for (const [shape, request, status, code] of cases) {
      const result = await invoke(shape, request)
      expect(result.statusCode, `${shape} ${request.path}`).toBe(status)
      expect(header(result, 'content-type')).toBe('application/problem+json')
      const problem = json(result)
      expect(problem).toMatchObject({ status, code, type: `urn:toolport:problem:${code}` })
      expect(problem.hint).toEqual(expect.any(String))
    }
  })

  it('serves health, catalog and OpenAPI with the shell present', async () => {
    const health = await invoke('function-url', { method: 'GET', path: '/healthz', key: null })
    expect(health.statusCode).toBe(200)
    const openapi = json(await invoke('http-api-v2', { method: 'GET', path: '/openapi.json', key: null }))
    expect(Object.keys(openapi.paths)).toContain('/v1/tools/execute_command')
    const ready = json(await invoke('function-url', { method: 'GET', path: '/readyz', key: null }))
    expect(ready.checks.sandbox).toMatchObject({ executor: 'process' })
  })

  it('runs execute_command with the process executor and leaves nothing in TMPDIR', async () => {
    const result = await invoke('function-url', {
      path: '/v1/tools/execute_command',
      query: { workspace: 'shell-ws' },
      body: { command: 'echo "from lambda" > made.txt && echo "$HOME" && env | grep -c AWS_ || true' },
    })
    expect(result.statusCode).toBe(200)
    const output = json(result)
    expect(output.exit_code).toBe(0)
    // The scrubbed environment: no AWS credentials reach the command.
    expect(output.stdout.trim().split('\n').at(-1)).toBe('0')
    expect(output.files_changed).toEqual([expect.objectContaining({ path: 'made.txt', change: 'added' })])
    const read = await invoke('function-url', {
      path: '/v1/tools/read_file',
      query: { workspace: 'shell-ws' },
      body: { path: 'made.txt' },
    })
    expect(json(read).content).toBe('from lambda\n')
    expect(await readdir(process.env.TMPDIR as string)).toEqual([])
  })

  it('streams text/event-stream through streamHandle (function URL, RESPONSE_STREAM)', async () => {
    const lambda = createLambdaApp(lambdaEnv())
    await lambda.ready
    let metadata: { statusCode: number; headers: Record<string, string> } | undefined
    // The Lambda runtime's global, reduced to what streamHandle calls.
    Object.assign(globalThis, {
      awslambda: {
        streamifyResponse: (handler: unknown) => handler,
        HttpResponseStream: {
          from: (stream: PassThrough, meta: typeof metadata) => {
            metadata = meta
            return stream
          },
        },
      },
    })
    try {
      const streaming = createStreamingHandler(lambda, (inner: StreamingHandler) => inner)
      const sink = new PassThrough()
      const chunks: Buffer[] = []
      sink.on('data', (chunk: Buffer) => chunks.push(chunk))
      const event = lambdaEvent('function-url', {
        path: '/v1/tools/write_file',
        query: { workspace: 'stream-ws' },
        body: { path: 's.txt', content: 'streamed' },
        key,
        headers: { accept: 'text/event-stream' },
      })
      await streaming(event, sink, {} as never)
      const text = Buffer.concat(chunks).toString('utf8')
      expect(metadata).toMatchObject({ statusCode: 200, headers: { 'content-type': 'text/event-stream' } })
      expect(text).toMatch(/^event: call\n/)
      expect(text).toMatch(/event: result\ndata: \{"path":"s.txt"/)
    } finally {
      Reflect.deleteProperty(globalThis, 'awslambda')
    }
  })

  it('answers 503 problem+json when the configuration cannot start, without details', async () => {
    const broken: Array<Record<string, string>> = [
      { TOOLPORT_API_KEYS: '' },
      { TOOLPORT_STORAGE: 'fs' },
      { TOOLPORT_API_KEYS_SECRET: 'arn:aws:s3:::bucket' },
    ]
    for (const extra of broken) {
      const lambda = createLambdaApp(lambdaEnv(extra))
      const result = (await createLambdaHandler(lambda)(
        lambdaEvent('function-url', { path: '/v1/tools/read_file', body: {}, key }),
        {} as never,
      )) as LambdaResult
      expect(result.statusCode).toBe(503)
      expect(json(result)).toMatchObject({ code: 'unavailable', detail: 'The service could not start.' })
      expect(result.body).not.toContain('TOOLPORT')
    }
  })
})
