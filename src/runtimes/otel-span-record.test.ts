import { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api'
import { addHrTimes, millisToHrTime, TraceState } from '@opentelemetry/core'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { afterEach, describe, expect, it } from 'vitest'
import { type SpanRecord, spanReplayer } from './otel-span-record'

// A span recorded where the call ran is made into the SDK's span elsewhere (the export worker, or this thread on
// Lambda): what the exporter then reads must be what the SDK would have made of the same span directly.
const parent = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' }
// As the SDK times a span: its start from the wall clock in milliseconds, its end and events offsets on the monotonic one.
const started = Date.UTC(2026, 11, 7, 8, 0, 0)
const after = (offset: number) => addHrTimes(millisToHrTime(started), millisToHrTime(offset))

function direct() {
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'direct' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  })
  const context = trace.setSpanContext(ROOT_CONTEXT, {
    ...parent,
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
    traceState: new TraceState('vendor=opaque'),
  })
  const span = provider.getTracer('toolport', '1.2.3').startSpan(
    'execute_tool read_file',
    {
      kind: SpanKind.SERVER,
      attributes: { 'gen_ai.tool.name': 'read_file', count: 3 },
      startTime: millisToHrTime(started),
    },
    context,
  )
  span.setAttributes({ 'toolport.outcome': 'error', ok: false })
  span.setStatus({ code: SpanStatusCode.ERROR, message: 'nope' })
  span.recordException(
    { code: 'ENOENT', name: 'Error', message: 'nope', stack: 'Error: nope\n    at here' },
    after(1.25),
  )
  span.end(after(12.5))
  const [made] = exporter.getFinishedSpans()
  if (!made) throw new Error('no span')
  return made
}

function replayed(record: SpanRecord, env: Record<string, string> = {}) {
  Object.assign(process.env, env)
  try {
    const exporter = new InMemorySpanExporter()
    const resource = resourceFromAttributes({ 'service.name': 'replayed' })
    const sink = spanReplayer(new SimpleSpanProcessor(exporter), resource, { name: 'toolport', version: '1.2.3' })
    sink.add(structuredClone(record))
    const [made] = exporter.getFinishedSpans()
    if (!made) throw new Error('no span')
    return { made, resource }
  } finally {
    for (const key of Object.keys(env)) delete process.env[key]
  }
}

const record = (): SpanRecord => [
  'execute_tool read_file',
  SpanKind.SERVER,
  parent.traceId,
  'b7ad6b7169203331',
  'vendor=opaque',
  parent.spanId,
  TraceFlags.SAMPLED,
  true,
  started,
  12.5,
  { 'gen_ai.tool.name': 'read_file', count: 3, 'toolport.outcome': 'error', ok: false },
  SpanStatusCode.ERROR,
  'nope',
  [['ENOENT', 'Error', 'nope', 'Error: nope\n    at here', 1.25]],
]

describe('a recorded span, replayed into the SDK', () => {
  afterEach(() => {
    delete process.env.OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT
  })

  it('is the span the SDK makes directly of the same start, attributes, status, exception and end', () => {
    const expected = direct()
    const { made, resource } = replayed(record())
    expect(made.spanContext()).toMatchObject({ traceId: parent.traceId, spanId: 'b7ad6b7169203331', traceFlags: 1 })
    expect(made.spanContext().traceState?.serialize()).toBe('vendor=opaque')
    expect(made.parentSpanContext).toMatchObject({ ...parent, traceFlags: 1, isRemote: true })
    for (const field of [
      'name',
      'kind',
      'startTime',
      'endTime',
      'duration',
      'attributes',
      'status',
      'events',
    ] as const) {
      expect(made[field], field).toEqual(expected[field])
    }
    expect(made.events[0]?.attributes).toEqual({
      'exception.type': 'ENOENT',
      'exception.message': 'nope',
      'exception.stacktrace': 'Error: nope\n    at here',
    })
    expect(made.instrumentationScope).toMatchObject({ name: 'toolport', version: '1.2.3' })
    expect(made.resource).toBe(resource)
    expect(made.droppedAttributesCount).toBe(0)
  })

  it('applies the SDK’s span limits from the environment where it is replayed', () => {
    const { made } = replayed(record(), { OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT: '2' })
    expect(Object.keys(made.attributes)).toEqual(['gen_ai.tool.name', 'count'])
    expect(made.droppedAttributesCount).toBe(2)
  })

  it('makes a root span of a record without a parent, with its own trace id', () => {
    const root = record()
    root[5] = undefined
    root[6] = undefined
    root[7] = undefined
    root[4] = undefined
    const { made } = replayed(root)
    expect(made.parentSpanContext).toBeUndefined()
    expect(made.spanContext().traceId).toBe(parent.traceId)
    expect(made.spanContext().traceState).toBeUndefined()
  })
})
