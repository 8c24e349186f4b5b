import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type LocalWeb, startLocalWeb } from '../support/local-web'
import { newParent, type OtlpReceiver, startOtlpReceiver } from '../support/otlp-receiver'
import { type S3rverInstance, s3StorageFor, startS3rver } from '../support/s3rver'
import { startTestServer, type TestServer } from '../support/server'
import { startSourceUpstreams } from '../support/source-upstreams'
import { putSource } from '../support/sources-api'

// OpenTelemetry traces, exported over OTLP/HTTP to a real receiver on 127.0.0.1: a call joins the trace
// of the traceparent its caller sent (REST header, MCP _meta), a job's run is a span of the call that
// made it, a source's upstream gets the trace, and a URL a model asked for does not.

const key = 'tracing-admin-key-0123456789'
const gatedKey = 'tracing-gated-key-0123456789'
const approverKey = 'tracing-approver-key-0123456789'
let receiver: OtlpReceiver
let server: TestServer
let upstream: LocalWeb
let target: LocalWeb
let bucket: S3rverInstance

beforeAll(async () => {
  receiver = await startOtlpReceiver()
  // A bucket, as a fleet has: its requests are spans (the fs driver's file system calls are not).
  bucket = await startS3rver()
  upstream = await startSourceUpstreams()
  target = await startLocalWeb({
    '/page': (_request, response) => response.end('a page'),
    '/hook': (_request, response) => response.end(),
    '/approvals': (_request, response) => response.end(),
  })
  server = await startTestServer(
    {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '50',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'toolport-test',
      TOOLPORT_SIGNING_SECRET: 'tracing-signing-secret-0123456789abcdef',
      TOOLPORT_APPROVAL_WEBHOOK_URL: `http://127.0.0.1:${target.port}/approvals`,
      TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${upstream.port},127.0.0.1:${target.port}`,
    },
    {
      storage: s3StorageFor(bucket),
      fileKeys: [
        { tenant: 'acme', key, admin: true },
        { tenant: 'acme', key: gatedKey, require_approval: ['destructive'] },
        { tenant: 'acme', key: approverKey, approver: true },
      ],
    },
  )
  const put = await putSource(server, key, {
    id: 'sheets',
    url: `${upstream.url}/rpc`,
    rpc: {
      methods: {
        add: { inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } } },
      },
    },
    aiTools: [{ name: 'sheet_add', method: 'add', effect: 'read', description: 'Adds two numbers.' }],
  })
  expect(put.status, JSON.stringify(put.body)).toBe(201)
})
afterAll(async () => {
  await server?.stop()
  await receiver?.close()
  await upstream?.stop()
  await target?.stop()
  await bucket?.stop()
})

describe('OpenTelemetry traces', () => {
  it('makes a REST call a span of the caller’s trace, named and attributed after the GenAI conventions', async () => {
    const parent = newParent()
    await server.call('write_file', { path: 'traced.txt', content: 'x' }, { key })
    const read = await server.call(
      'read_file',
      { path: 'traced.txt' },
      { key, headers: { traceparent: parent.traceparent } },
    )
    expect(read.status).toBe(200)
    const spans = await receiver.spansUntil(parent.traceId, 'execute_tool read_file')
    const span = spans.find((candidate) => candidate.name === 'execute_tool read_file')
    expect(span).toMatchObject({
      name: 'execute_tool read_file',
      parentSpanId: parent.spanId,
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'read_file',
        'toolport.tenant': 'acme',
        'toolport.workspace': 'default',
        'toolport.tool.effect': 'read',
        'toolport.outcome': 'ok',
        'http.response.status_code': 200,
      },
    })
    // Its storage requests are its children, with the driver and key.
    const storage = spans.filter((candidate) => candidate.name.startsWith('storage '))
    expect(storage.length).toBeGreaterThan(0)
    for (const request of storage) {
      expect(request.parentSpanId).toBe(span?.spanId)
      expect(request.attributes['toolport.storage.key']).toMatch(/traced\.txt$/)
      expect(request.attributes['toolport.storage.driver']).toBe('s3')
    }
    // A failed call says how it failed.
    const missing = newParent()
    await server.call('read_file', { path: 'none.txt' }, { key, headers: { traceparent: missing.traceparent } })
    const failed = (await receiver.spansUntil(missing.traceId, 'execute_tool read_file')).find(
      (candidate) => candidate.name === 'execute_tool read_file',
    )
    expect(failed?.attributes).toMatchObject({
      'toolport.outcome': 'error',
      'error.type': 'not_found',
      'http.response.status_code': 404,
    })
  })

  it('takes the trace of an MCP tools/call from its _meta, with the request id as the tool call id', async () => {
    const parent = newParent()
    const client = new Client({ name: 'tracing', version: '1.0.0' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    )
    await client.callTool({ name: 'list_files', arguments: {}, _meta: { traceparent: parent.traceparent } })
    await client.close()
    const span = (await receiver.spansUntil(parent.traceId, 'execute_tool list_files')).find(
      (candidate) => candidate.name === 'execute_tool list_files',
    )
    expect(span).toMatchObject({ name: 'execute_tool list_files', parentSpanId: parent.spanId })
    expect(span?.attributes['gen_ai.tool.call.id']).toMatch(/^\d+$/)
  })

  it('runs a job as a span of the call that made it', async () => {
    const parent = newParent()
    const callback = `${target.url}/hook`
    const response = await fetch(
      `${server.url}/v1/tools/list_files?async=true&callback_url=${encodeURIComponent(callback)}`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          traceparent: parent.traceparent,
        },
        body: '{}',
      },
    )
    expect(response.status).toBe(202)
    const { job_id: jobId } = (await response.json()) as { job_id: string }
    // The hand-off and the job's run: both named for the tool, the run ending after the answer.
    let spans = (await receiver.spansUntil(parent.traceId, 'execute_tool list_files')).filter((span) =>
      span.name.startsWith('execute_tool'),
    )
    for (let wait = 0; spans.length < 2 && wait < 600; wait++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      spans = receiver.spans.filter((span) => span.traceId === parent.traceId && span.name.startsWith('execute_tool'))
    }
    const handOff = spans.find((span) => span.parentSpanId === parent.spanId)
    expect(handOff).toMatchObject({
      name: 'execute_tool list_files',
      attributes: { 'toolport.job.id': jobId, 'toolport.outcome': 'job' },
    })
    const run = spans.find((span) => span.parentSpanId === handOff?.spanId)
    expect(run).toMatchObject({
      name: 'execute_tool list_files',
      attributes: { 'toolport.job.id': jobId, 'toolport.outcome': 'ok' },
    })
    // Its webhook carries the trace too (the job's context: the hand-off span).
    for (let wait = 0; !target.hits.some((hit) => hit.url === '/hook') && wait < 600; wait++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const hook = target.hits.find((hit) => hit.url === '/hook')
    expect(hook?.headers.traceparent).toBe(`00-${parent.traceId}-${handOff?.spanId}-01`)
  })

  it("sends the call's trace to a source's upstream, never to a URL a model asked for", async () => {
    const parent = newParent()
    const sum = await server.call('sheet_add', { a: 1, b: 2 }, { key, headers: { traceparent: parent.traceparent } })
    expect(sum.status, JSON.stringify(sum.body)).toBe(200)
    const spans = await receiver.spansUntil(parent.traceId, 'execute_tool sheet_add')
    const span = spans.find((candidate) => candidate.name === 'execute_tool sheet_add')
    const client = spans.find((candidate) => candidate.name === 'source sheets')
    expect(client?.parentSpanId).toBe(span?.spanId)
    // The upstream's parent is the call's client span, in the caller's trace.
    const sent = upstream.hits.at(-1)?.headers.traceparent
    expect(sent).toBe(`00-${parent.traceId}-${client?.spanId}-01`)
    expect(span?.attributes).toMatchObject({ 'gen_ai.tool.name': 'sheet_add', 'gen_ai.tool.type': 'extension' })
    const fetched = await server.call(
      'http_fetch',
      { url: `${target.url}/page` },
      { key, headers: { traceparent: newParent().traceparent } },
    )
    expect(fetched.status).toBe(200)
    expect(target.hits.at(-1)?.headers.traceparent).toBeUndefined()
  })

  it('tells approvers in the trace of the call that asked, and runs the approved call in that trace', async () => {
    const parent = newParent()
    await server.call('write_file', { path: 'gated.txt', content: 'x' }, { key })
    const pending = await server.call(
      'delete_file',
      { path: 'gated.txt' },
      { key: gatedKey, headers: { traceparent: parent.traceparent } },
    )
    expect(pending.status).toBe(202)
    for (let wait = 0; !target.hits.some((hit) => hit.url === '/approvals') && wait < 600; wait++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(target.hits.find((hit) => hit.url === '/approvals')?.headers.traceparent).toBe(parent.traceparent)
    const decided = await fetch(`${server.url}/v1/approvals/${pending.body.approval_id}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${approverKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    })
    expect(decided.status).toBe(200)
    const spans = await receiver.spansUntil(parent.traceId, 'execute_tool delete_file')
    expect(spans.find((span) => span.name === 'execute_tool delete_file')?.parentSpanId).toBe(parent.spanId)
  })
})
