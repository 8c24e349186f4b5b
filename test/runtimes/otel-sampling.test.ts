import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { otelTracing } from '../../src/runtimes/otel-tracing'
import { newParent, type OtlpReceiver, startOtlpReceiver } from '../support/otlp-receiver'

// Where a call runs, a span is only recorded, after the sampler's decision made there as the SDK's tracer makes it
// (src/runtimes/otel-tracing.ts); the SDK's span is made of the record where it is exported. Exported in this thread
// here, as on Lambda, to a real OTLP/HTTP receiver.
describe('spans recorded where the call runs', () => {
  let receiver: OtlpReceiver
  beforeAll(async () => {
    receiver = await startOtlpReceiver()
  })
  afterAll(() => receiver?.close())

  const tracingWith = async (more: Record<string, string> = {}) => {
    const tracing = await otelTracing(
      { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', ...more },
      '9.9.9',
    )
    if (!tracing) throw new Error('tracing did not start')
    return tracing
  }
  const exported = (traceId: string) => receiver.spans.filter((span) => span.traceId === traceId)

  it('follows a caller that did not sample: nothing recorded or exported, its trace propagated unsampled', async () => {
    const tracing = await tracingWith()
    const parent = newParent()
    const span = tracing.start('execute_tool read_file', {
      parent: { traceparent: parent.traceparent.replace(/-01$/, '-00') },
    })
    expect(span.recording).toBe(false)
    const carried = span.carrier().traceparent ?? ''
    expect(carried).toMatch(new RegExp(`^00-${parent.traceId}-[0-9a-f]{16}-00$`))
    expect(carried).not.toContain(parent.spanId)
    span.end()
    // A sampled trace flushed after it proves the export ran.
    const marker = newParent()
    tracing.start('marker', { parent: { traceparent: marker.traceparent } }).end()
    await tracing.flush()
    expect(exported(marker.traceId)).toHaveLength(1)
    expect(exported(parent.traceId)).toEqual([])
  })

  it('honours OTEL_TRACES_SAMPLER: always_off exports nothing, always_on exports even under an unsampled caller', async () => {
    const off = await tracingWith({ OTEL_TRACES_SAMPLER: 'always_off' })
    const quiet = newParent()
    const dropped = off.start('dropped', { parent: { traceparent: quiet.traceparent } })
    expect(dropped.recording).toBe(false)
    dropped.end()
    await off.flush()
    expect(exported(quiet.traceId)).toEqual([])

    const on = await tracingWith({ OTEL_TRACES_SAMPLER: 'always_on' })
    const unsampled = newParent()
    const kept = on.start('kept', { parent: { traceparent: unsampled.traceparent.replace(/-01$/, '-00') } })
    expect(kept.recording).toBe(true)
    expect(kept.carrier().traceparent).toMatch(/-01$/)
    kept.end()
    await on.flush()
    expect(exported(unsampled.traceId).map((span) => span.name)).toEqual(['kept'])
  })

  it('records attributes set before the end, drops undefined ones, ignores what comes after, and ends once', async () => {
    const tracing = await tracingWith()
    const parent = newParent()
    const span = tracing.start('execute_tool read_file', {
      parent: { traceparent: parent.traceparent, tracestate: 'vendor=opaque' },
      attributes: { 'gen_ai.tool.name': 'read_file', 'gen_ai.tool.call.id': undefined, count: 1 },
    })
    span.setAttributes({ count: 2, 'toolport.outcome': 'error' })
    // An undefined value neither sets nor clears a key, as the SDK's setAttribute.
    span.setAttributes({ 'gen_ai.tool.name': undefined })
    span.fail(Object.assign(new Error('no such file'), { code: 'ENOENT' }))
    span.end()
    span.setAttributes({ late: true })
    span.fail(new Error('late'))
    span.end()
    await tracing.flush()
    const spans = exported(parent.traceId)
    expect(spans).toHaveLength(1)
    expect(spans[0]).toMatchObject({
      parentSpanId: parent.spanId,
      traceState: 'vendor=opaque',
      attributes: { 'gen_ai.tool.name': 'read_file', count: 2, 'toolport.outcome': 'error' },
      status: { code: 2, message: 'no such file' },
      events: ['exception'],
    })
    expect(Object.keys(spans[0]?.attributes ?? {})).not.toContain('gen_ai.tool.call.id')
    expect(Object.keys(spans[0]?.attributes ?? {})).not.toContain('late')
  })

  it('starts a trace of its own without a caller, and makes a child of a span in that trace', async () => {
    const tracing = await tracingWith()
    const root = tracing.start('job run', {})
    const traceId = root.carrier().traceparent?.split('-')[1] ?? ''
    expect(traceId).toMatch(/^[0-9a-f]{32}$/)
    const child = root.child('storage get', { 'toolport.storage.key': 'a/b' }, 'client')
    child.end()
    root.end()
    await tracing.flush()
    const spans = exported(traceId)
    const rootSpan = spans.find((span) => span.name === 'job run')
    expect(rootSpan?.parentSpanId).toBeUndefined()
    expect(spans.find((span) => span.name === 'storage get')).toMatchObject({
      parentSpanId: rootSpan?.spanId,
      kind: 3,
      attributes: { 'toolport.storage.key': 'a/b' },
    })
  })
})
