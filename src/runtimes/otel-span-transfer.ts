import type { Attributes, HrTime, Link, SpanContext, SpanKind, SpanStatus } from '@opentelemetry/api'
import { type InstrumentationScope, TraceState } from '@opentelemetry/core'
import type { Resource } from '@opentelemetry/resources'
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace-base'

/** A span context as it crosses to the export worker: its trace state as the W3C header text. */
interface SentContext {
  traceId: string
  spanId: string
  traceFlags: number
  isRemote?: boolean
  traceState?: string
}

/**
 * An ended span as structured clone carries it to the export worker (otel-export-worker.ts): the
 * fields OTLP encodes, as plain data. The resource is not sent: the worker holds the same one.
 */
export interface SentSpan {
  name: string
  kind: SpanKind
  context: SentContext
  parent?: SentContext
  startTime: HrTime
  endTime: HrTime
  duration: HrTime
  status: SpanStatus
  attributes: Attributes
  links: Array<{ context: SentContext; attributes?: Attributes; droppedAttributesCount?: number }>
  events: TimedEvent[]
  scope: InstrumentationScope
  dropped: [attributes: number, events: number, links: number]
}

function sentContext(context: SpanContext): SentContext {
  const traceState = context.traceState?.serialize()
  return {
    traceId: context.traceId,
    spanId: context.spanId,
    traceFlags: context.traceFlags,
    ...(context.isRemote !== undefined ? { isRemote: context.isRemote } : {}),
    ...(traceState ? { traceState } : {}),
  }
}

function receivedContext(sent: SentContext): SpanContext {
  return {
    traceId: sent.traceId,
    spanId: sent.spanId,
    traceFlags: sent.traceFlags,
    ...(sent.isRemote !== undefined ? { isRemote: sent.isRemote } : {}),
    ...(sent.traceState ? { traceState: new TraceState(sent.traceState) } : {}),
  }
}

/** The main thread's side: an ended span as data. Its objects are the span's own (cloned by postMessage). */
export function sendSpan(span: ReadableSpan): SentSpan {
  return {
    name: span.name,
    kind: span.kind,
    context: sentContext(span.spanContext()),
    ...(span.parentSpanContext ? { parent: sentContext(span.parentSpanContext) } : {}),
    startTime: span.startTime,
    endTime: span.endTime,
    duration: span.duration,
    status: span.status,
    attributes: span.attributes,
    links: span.links.map((link: Link) => ({
      context: sentContext(link.context),
      ...(link.attributes ? { attributes: link.attributes } : {}),
      ...(link.droppedAttributesCount ? { droppedAttributesCount: link.droppedAttributesCount } : {}),
    })),
    events: span.events,
    scope: span.instrumentationScope,
    dropped: [span.droppedAttributesCount, span.droppedEventsCount, span.droppedLinksCount],
  }
}

/** The worker's side: the span again, as the OTLP exporter reads one, under the worker's resource. */
export function receiveSpan(sent: SentSpan, resource: Resource): ReadableSpan {
  const context = receivedContext(sent.context)
  return {
    name: sent.name,
    kind: sent.kind,
    spanContext: () => context,
    ...(sent.parent ? { parentSpanContext: receivedContext(sent.parent) } : {}),
    startTime: sent.startTime,
    endTime: sent.endTime,
    duration: sent.duration,
    status: sent.status,
    attributes: sent.attributes,
    links: sent.links.map((link) => ({ ...link, context: receivedContext(link.context) })),
    events: sent.events,
    ended: true,
    resource,
    instrumentationScope: sent.scope,
    droppedAttributesCount: sent.dropped[0],
    droppedEventsCount: sent.dropped[1],
    droppedLinksCount: sent.dropped[2],
  }
}
