import {
  type Attributes,
  type Context,
  type Exception,
  type HrTime,
  ROOT_CONTEXT,
  type SpanKind,
  type SpanStatusCode,
  TraceFlags,
  trace,
} from '@opentelemetry/api'
import { addHrTimes, millisToHrTime, TraceState } from '@opentelemetry/core'
import type { Resource } from '@opentelemetry/resources'
import { BasicTracerProvider, SamplingDecision, type SpanProcessor } from '@opentelemetry/sdk-trace-base'

/** An exception a span recorded, as the SDK's recordException reads one: its code or name, message and stack. */
export type RecordedException = [
  code: string | undefined,
  name: string | undefined,
  message: string | undefined,
  stack: string | undefined,
  offset: number,
]

/**
 * A sampled span as the serving thread recorded it, to be made into the SDK's span by replay(): plain
 * data in one array, which structured clone carries to the export worker at about a third of the cost
 * of nested objects (it writes every key of every object). Times are the SDK's: the start from the wall
 * clock (Date.now()), the end and each exception that many milliseconds later on the monotonic clock.
 * The attributes are the start's with every later setAttributes merged in, in order, as the SDK itself
 * keeps them. A parent is in the span's own trace.
 */
export type SpanRecord = [
  name: string,
  kind: SpanKind,
  traceId: string,
  spanId: string,
  traceState: string | undefined,
  parentSpanId: string | undefined,
  parentTraceFlags: number | undefined,
  parentIsRemote: boolean | undefined,
  startTime: number,
  endOffset: number,
  attributes: Attributes,
  statusCode: SpanStatusCode | undefined,
  statusMessage: string | undefined,
  exceptions: RecordedException[] | undefined,
]

/** Where recorded spans go: a worker thread's replay (Node), or this thread's (Lambda). */
export interface SpanSink {
  add(record: SpanRecord): void
  forceFlush(): Promise<void>
  shutdown(): Promise<void>
}

/**
 * Makes each record into the OpenTelemetry SDK's own span, with the ids, times and sampling decision
 * the serving thread recorded, and ends it into `processor` (a BatchSpanProcessor with the OTLP
 * exporter): the SDK applies its attribute sanitizing and span limits (OTEL_SPAN_*, OTEL_ATTRIBUTE_*),
 * builds the exception events and the span exactly as if it had been made where the call ran. The
 * provider's sampler and id generator hand back the record's decision and ids, one record at a time.
 */
export function spanReplayer(
  processor: SpanProcessor,
  resource: Resource,
  scope: { name: string; version?: string | undefined },
): SpanSink & { replay(record: SpanRecord): void } {
  let current: SpanRecord | undefined
  const provider = new BasicTracerProvider({
    resource,
    spanProcessors: [processor],
    sampler: {
      shouldSample: () => ({
        decision: SamplingDecision.RECORD_AND_SAMPLED,
        ...(current?.[4] !== undefined ? { traceState: new TraceState(current[4]) } : {}),
      }),
      toString: () => 'RecordedDecision',
    },
    idGenerator: {
      generateTraceId: () => (current as SpanRecord)[2],
      generateSpanId: () => (current as SpanRecord)[3],
    },
  })
  const tracer = provider.getTracer(scope.name, scope.version)

  function parentContext(record: SpanRecord): Context {
    const [, , traceId, , , parentSpanId, parentTraceFlags, parentIsRemote] = record
    if (parentSpanId === undefined) return ROOT_CONTEXT
    return trace.setSpanContext(ROOT_CONTEXT, {
      traceId,
      spanId: parentSpanId,
      traceFlags: parentTraceFlags ?? TraceFlags.NONE,
      ...(parentIsRemote !== undefined ? { isRemote: parentIsRemote } : {}),
    })
  }

  function replay(record: SpanRecord): void {
    const [name, kind, , , , , , , startTime, endOffset, attributes, statusCode, statusMessage, exceptions] = record
    const start = millisToHrTime(startTime)
    const after = (offset: number): HrTime => addHrTimes(start, millisToHrTime(offset))
    current = record
    try {
      const span = tracer.startSpan(name, { kind, attributes, startTime: start }, parentContext(record))
      if (statusCode !== undefined) {
        span.setStatus({ code: statusCode, ...(statusMessage !== undefined ? { message: statusMessage } : {}) })
      }
      for (const [code, name, message, stack, offset] of exceptions ?? []) {
        span.recordException(
          {
            ...(code !== undefined ? { code } : {}),
            ...(name !== undefined ? { name } : {}),
            ...(message !== undefined ? { message } : {}),
            ...(stack !== undefined ? { stack } : {}),
          } as Exception,
          after(offset),
        )
      }
      span.end(after(endOffset))
    } finally {
      current = undefined
    }
  }

  return {
    replay,
    add: replay,
    forceFlush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  }
}
