/**
 * Tracing as the rest of toolport sees it: spans it starts, ends and hands to what it calls, with no
 * OpenTelemetry type anywhere (runtimes/otel-tracing.ts implements it with the OpenTelemetry SDK when
 * the standard OTEL_* variables ask for it). Off, every method is a no-op on one shared object: a call
 * pays for no span, no id and no header.
 */
export type SpanAttributes = Record<string, string | number | boolean | undefined>

/** A W3C Trace Context, as a caller sends it (REST headers, MCP `_meta`) and a job keeps it. */
export interface TraceCarrier {
  traceparent?: string
  tracestate?: string
}

export interface TraceSpan {
  readonly recording: boolean
  setAttributes(attributes: SpanAttributes): void
  /** A span of work done for this one (a checkout, a sandbox run, a source's upstream call). */
  child(name: string, attributes?: SpanAttributes, kind?: 'internal' | 'client'): TraceSpan
  /** This span's W3C context, for a request toolport sends on its behalf (a source's upstream). */
  carrier(): TraceCarrier
  /** Marks the span failed (status error), with what failed. */
  fail(error: unknown): void
  end(): void
}

export interface Tracing {
  readonly enabled: boolean
  /** A span; its parent is the caller's W3C context (a request's, a job's) or a span of toolport's. */
  start(
    name: string,
    options: {
      kind?: 'server' | 'internal' | 'client'
      attributes?: SpanAttributes
      parent?: TraceCarrier | TraceSpan
    },
  ): TraceSpan
  /** Sends what is buffered (before a Lambda function freezes). */
  flush(): Promise<void>
}

const noSpan: TraceSpan = {
  recording: false,
  setAttributes() {},
  child: () => noSpan,
  carrier: () => ({}),
  fail() {},
  end() {},
}

/** Tracing off: what every runtime has unless OTEL_* configuration turns it on. */
export const noTracing: Tracing = {
  enabled: false,
  start: () => noSpan,
  flush: async () => {},
}

/** The W3C headers of a request, if it carries a trace context (anything else about them is the tracer's to judge). */
export function carrierOf(get: (name: string) => string | null | undefined): TraceCarrier | undefined {
  const traceparent = get('traceparent') ?? undefined
  if (!traceparent) return undefined
  const tracestate = get('tracestate') ?? undefined
  return { traceparent, ...(tracestate ? { tracestate } : {}) }
}

/** A carrier as headers (or MCP `_meta` keys): its fields that are set. */
export function carrierHeaders(carrier: TraceCarrier | undefined): Record<string, string> {
  const headers: Record<string, string> = {}
  if (carrier?.traceparent) headers.traceparent = carrier.traceparent
  if (carrier?.tracestate) headers.tracestate = carrier.tracestate
  return headers
}

/** Runs `work` in a child span of `span`, ended when it settles (failed when it throws). */
export async function inSpan<T>(
  span: TraceSpan | undefined,
  name: string,
  attributes: SpanAttributes,
  work: (child: TraceSpan) => Promise<T>,
  kind: 'internal' | 'client' = 'internal',
): Promise<T> {
  const child = span?.recording ? span.child(name, attributes, kind) : noSpan
  try {
    return await work(child)
  } catch (error) {
    child.fail(error)
    throw error
  } finally {
    child.end()
  }
}
