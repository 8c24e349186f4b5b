import { readdir, readFile } from 'node:fs/promises'
import { getPriority } from 'node:os'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { otelTracing } from '../../src/runtimes/otel-tracing'
import { newParent, type OtlpReceiver, startOtlpReceiver } from '../support/otlp-receiver'

// The Node service's trace export: spans recorded where the call runs, handed as data to a worker thread that makes the
// SDK's spans of them, batches and exports them (src/runtimes/otel-worker-sink.ts), and what arrives at a real OTLP/HTTP receiver.
const workerSource = new URL('../../src/runtimes/otel-export-worker.ts', import.meta.url)

describe('trace export from a worker thread', () => {
  let receiver: OtlpReceiver
  beforeAll(async () => {
    receiver = await startOtlpReceiver()
  })
  afterAll(() => receiver?.close())

  const env = () => ({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'toolport-worker-test',
  })

  it('delivers every field OTLP carries: ids, parent links, kind, attributes, status, events, trace state', async () => {
    const tracing = await otelTracing(env(), '9.9.9', { exportWorker: { url: workerSource, typescript: true } })
    if (!tracing) throw new Error('tracing did not start')
    const parent = newParent()
    const call = tracing.start('execute_tool read_file', {
      kind: 'internal',
      parent: { traceparent: parent.traceparent, tracestate: 'vendor=opaque,other=1' },
      attributes: { 'gen_ai.tool.name': 'read_file', 'toolport.tenant': 'acme', count: 3, ok: true },
    })
    const upstream = call.child('GET upstream', { 'http.request.method': 'GET' }, 'client')
    upstream.fail(new Error('upstream refused'))
    upstream.end()
    call.setAttributes({ 'toolport.outcome': 'ok' })
    call.end()
    // The flush returns once the worker's exporter has sent the batch, not before.
    await tracing.flush()
    const spans = receiver.spans.filter((span) => span.traceId === parent.traceId)
    expect(spans).toHaveLength(2)
    const callSpan = spans.find((span) => span.name === 'execute_tool read_file')
    const upstreamSpan = spans.find((span) => span.name === 'GET upstream')
    expect(callSpan).toMatchObject({
      parentSpanId: parent.spanId,
      kind: 1,
      attributes: { 'gen_ai.tool.name': 'read_file', 'toolport.tenant': 'acme', count: 3, ok: true },
      traceState: 'vendor=opaque,other=1',
    })
    expect(callSpan?.attributes['toolport.outcome']).toBe('ok')
    expect(upstreamSpan).toMatchObject({
      parentSpanId: callSpan?.spanId,
      kind: 3,
      status: { code: 2, message: 'upstream refused' },
      events: ['exception'],
    })
    expect(upstreamSpan?.spanId).toMatch(/^[0-9a-f]{16}$/)
    expect(upstreamSpan?.spanId).not.toBe(callSpan?.spanId)
  })

  it('exports a span failed with an error whose fields are not strings, which cannot be cloned as they are', async () => {
    const tracing = await otelTracing(env(), '9.9.9', { exportWorker: { url: workerSource, typescript: true } })
    if (!tracing) throw new Error('tracing did not start')
    const parent = newParent()
    const odd = Object.assign(new Error('plain'), { message: () => 'a function', name: Symbol('odd'), code: 42 })
    const span = tracing.start('odd failure', { parent: { traceparent: parent.traceparent } })
    span.fail(odd)
    span.end()
    await tracing.flush()
    const [exported] = receiver.spans.filter((each) => each.traceId === parent.traceId)
    expect(exported).toMatchObject({ name: 'odd failure', status: { code: 2 }, events: ['exception'] })
    expect(exported?.status?.message ?? '').toBe('')
  })

  it('runs the export thread at nice 10 on Linux, leaving the serving threads at their own priority', async () => {
    const niceOfThreads = async () => {
      const tasks = await readdir('/proc/self/task')
      const values = await Promise.all(
        tasks.map(async (task) => {
          const stat = await readFile(`/proc/self/task/${task}/stat`, 'utf8').catch(() => '')
          // Fields after the command name (which may hold spaces) end at ')': nice is field 19.
          return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])
        }),
      )
      return values.filter((value) => value === 10).length
    }
    const before = await niceOfThreads()
    const tracing = await otelTracing(env(), '9.9.9', { exportWorker: { url: workerSource, typescript: true } })
    if (!tracing) throw new Error('tracing did not start')
    tracing.start('priority probe', {}).end()
    await tracing.flush()
    expect(await niceOfThreads()).toBe(before + 1)
    expect(getPriority(0)).toBe(0)
  })

  it('exports in this thread when the worker entry cannot start, losing no span', async () => {
    const missing = new URL('./no-such-worker.js', import.meta.url)
    const tracing = await otelTracing(env(), '9.9.9', { exportWorker: { url: missing } })
    if (!tracing) throw new Error('tracing did not start')
    const parent = newParent()
    for (let index = 0; index < 3; index++) {
      tracing.start(`span ${index}`, { parent: { traceparent: parent.traceparent } }).end()
    }
    await tracing.flush()
    const spans = receiver.spans.filter((span) => span.traceId === parent.traceId)
    expect(spans.map((span) => span.name).sort()).toEqual(['span 0', 'span 1', 'span 2'])
  })
})
