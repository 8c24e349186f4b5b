import {
  type Attributes,
  type Context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from '@opentelemetry/api'
import { isAttributeValue, W3CTraceContextPropagator } from '@opentelemetry/core'
import { resourceFromAttributes } from '@opentelemetry/resources'
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  SamplingDecision,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base'
import type { SpanAttributes, TraceCarrier, TraceSpan, Tracing } from '../core/tracing'
import { type OtlpExportConfig, otlpExporter } from './otel-exporter'
import { pooledIdGenerator } from './otel-ids'
import { type RecordedException, type SpanRecord, type SpanSink, spanReplayer } from './otel-span-record'
import type { TraceExportWorkerOptions } from './otel-worker-sink'

/**
 * Tracing with the OpenTelemetry SDK, exported over OTLP/HTTP, when the standard variables ask for it:
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT (+ /v1/traces), and neither
 * OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none. OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL picks
 * http/protobuf (the specification's default) or http/json; OTEL_BSP_* tune the batches; OTEL_TRACES_SAMPLER
 * picks the sampler. Nothing is registered globally: the sampler, the W3C propagator and every parent
 * context are this object's, passed explicitly.
 *
 * Where a call runs, a span is only recorded: its ids and the sampler's decision, made here as the SDK's
 * tracer makes them, its times, attributes, status and exceptions. The SDK's own span is made from that
 * record by replay (otel-span-record.ts) where the batching and the export happen, in a worker thread on
 * Node: the SDK's span objects, their attribute sanitizing, limits and clocks had cost the serving thread
 * about a twelfth of a small call's requests per second (bench/tracing.ts), where a record costs it about
 * a hundredth.
 */
export async function otelTracing(
  env: Record<string, string | undefined>,
  version: string,
  options: { exportWorker?: TraceExportWorkerOptions } = {},
): Promise<Tracing | undefined> {
  const url = tracesUrl(env)
  if (!url || env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return undefined
  const config: OtlpExportConfig = {
    url,
    protocol: env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf',
    ...(env.OTEL_EXPORTER_OTLP_HEADERS ? { headers: parseHeaders(env.OTEL_EXPORTER_OTLP_HEADERS) } : {}),
  }
  const resource = { 'service.name': env.OTEL_SERVICE_NAME ?? 'toolport', 'service.version': version }
  const scope = { name: 'toolport', version }
  const batch = {
    scheduledDelayMillis: numberOr(env.OTEL_BSP_SCHEDULE_DELAY, 5_000),
    maxQueueSize: numberOr(env.OTEL_BSP_MAX_QUEUE_SIZE, 2_048),
    maxExportBatchSize: numberOr(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, 512),
    exportTimeoutMillis: numberOr(env.OTEL_BSP_EXPORT_TIMEOUT, 30_000),
  }
  // On Node the replay, encoding and sending happen in a worker thread; where there is none to start
  // (Lambda, whose function freezes after each response), in this one.
  const sink: SpanSink = options.exportWorker
    ? (await import('./otel-worker-sink')).workerSpanSink(options.exportWorker, config, resource, scope, batch)
    : spanReplayer(new BatchSpanProcessor(await otlpExporter(config), batch), resourceFromAttributes(resource), scope)
  const sampler = samplerOf(env.OTEL_TRACES_SAMPLER, env.OTEL_TRACES_SAMPLER_ARG)
  const ids = pooledIdGenerator()
  const propagator = new W3CTraceContextPropagator()
  const kinds = { server: SpanKind.SERVER, internal: SpanKind.INTERNAL, client: SpanKind.CLIENT } as const

  /**
   * One span as toolport sees it: the SDK tracer's start (ids, the sampler's decision, the trace state),
   * then a record of what happens to it, handed to the sink when it ends. A span the sampler drops
   * records nothing and still propagates its context, as the SDK's non-recording span does.
   */
  class RecordingSpan implements TraceSpan {
    readonly recording: boolean
    readonly spanContext: SpanContext
    readonly #record: SpanRecord | undefined
    #startedAt = 0
    #ended = false
    constructor(name: string, kind: SpanKind, attributes: SpanAttributes, parent: Context) {
      const parentContext = trace.getSpanContext(parent)
      const valid = parentContext !== undefined && trace.isSpanContextValid(parentContext)
      const traceId = valid ? parentContext.traceId : ids.generateTraceId()
      const spanId = ids.generateSpanId()
      const initial = sanitized({}, attributes)
      const sampling = sampler.shouldSample(parent, traceId, name, kind, initial, [])
      const startedAt = performance.now()
      const traceState = sampling.traceState ?? (valid ? parentContext.traceState : undefined)
      const sampled = sampling.decision === SamplingDecision.RECORD_AND_SAMPLED
      this.spanContext = {
        traceId,
        spanId,
        traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
        ...(traceState ? { traceState } : {}),
      }
      this.recording = sampling.decision !== SamplingDecision.NOT_RECORD
      // Recorded but not sampled is never exported: only a sampled span keeps a record.
      if (!sampled) return
      // The SDK merges the sampler's attributes over the start's, then drops any whose value is invalid.
      for (const [key, value] of Object.entries(sampling.attributes ?? {})) {
        if (value != null && isAttributeValue(value)) initial[key] = copied(value)
        else delete initial[key]
      }
      this.#startedAt = startedAt
      this.#record = [
        name,
        kind,
        traceId,
        spanId,
        traceState?.serialize(),
        valid ? parentContext.spanId : undefined,
        valid ? parentContext.traceFlags : undefined,
        valid ? parentContext.isRemote : undefined,
        // As the SDK's span: its start on the wall clock, its end and events that far on the monotonic one.
        Date.now(),
        0,
        initial,
        undefined,
        undefined,
        undefined,
      ]
    }
    setAttributes(attributes: SpanAttributes): void {
      if (this.#record && !this.#ended) sanitized(this.#record[10], attributes)
    }
    child(name: string, attributes: SpanAttributes = {}, kind: 'internal' | 'client' = 'internal'): TraceSpan {
      return new RecordingSpan(name, kinds[kind], attributes, this.context())
    }
    /** This span as a parent context (its children's, its carrier's). */
    context(): Context {
      return trace.setSpanContext(ROOT_CONTEXT, this.spanContext)
    }
    carrier(): TraceCarrier {
      const carrier: Record<string, string> = {}
      propagator.inject(this.context(), carrier, defaultTextMapSetter)
      return carrier
    }
    fail(error: unknown): void {
      const record = this.#record
      if (!record || this.#ended) return
      const message =
        error instanceof Error ? error.message : typeof error === 'symbol' ? error.toString() : String(error)
      record[11] = SpanStatusCode.ERROR
      // The SDK drops a status message that is not a string.
      record[12] = typeof message === 'string' ? message : undefined
      if (error instanceof Error) {
        record[13] = [...(record[13] ?? []), exceptionOf(error, performance.now() - this.#startedAt)]
      }
    }
    end(): void {
      if (this.#ended) return
      this.#ended = true
      const record = this.#record
      if (!record) return
      record[9] = performance.now() - this.#startedAt
      sink.add(record)
    }
  }

  /** The parent's context: the caller's W3C headers (extracted), or a span of ours. */
  function parentOf(parent: TraceCarrier | TraceSpan | undefined): Context {
    if (!parent) return ROOT_CONTEXT
    // A span of ours is its own parent context, without a round trip through W3C headers.
    if (parent instanceof RecordingSpan) return parent.context()
    if ('carrier' in parent && typeof parent.carrier === 'function') {
      return propagator.extract(ROOT_CONTEXT, parent.carrier(), defaultTextMapGetter)
    }
    return propagator.extract(ROOT_CONTEXT, parent as TraceCarrier, defaultTextMapGetter)
  }

  return {
    enabled: true,
    start: (name, options) =>
      new RecordingSpan(name, kinds[options.kind ?? 'internal'], options.attributes ?? {}, parentOf(options.parent)),
    flush: () => sink.forceFlush(),
  }
}

/**
 * Copies the valid attributes into `into`, as the SDK's setAttribute takes them one by one: a null or
 * undefined value is skipped (it neither sets nor clears the key), an invalid one too, an array copied.
 * Where they differ, under a span attribute count limit only: a key set again after the limit refused
 * it is counted as dropped once here (the SDK counts each refusal), and the SDK sees the keys in this
 * object's order, where integer-like keys come first. toolport's keys are neither repeated past the
 * limit (128 by default, against about a dozen) nor integer-like.
 */
function sanitized(into: Attributes, attributes: SpanAttributes): Attributes {
  for (const key of Object.keys(attributes)) {
    const value = attributes[key]
    if (key.length > 0 && value != null && isAttributeValue(value)) into[key] = copied(value)
  }
  return into
}

/** An attribute value as the SDK keeps it: an array copied, so that a later change to it is not exported. */
function copied<T>(value: T): T {
  return (Array.isArray(value) ? value.slice() : value) as T
}

/** What the SDK's recordException reads from an error (its code as the type, else its name; its message and stack), and when, in milliseconds after the span's start. */
function exceptionOf(error: Error, offset: number): RecordedException {
  // A field is read behind a guard: V8 formats `stack` lazily from `name`, and that getter throws
  // when the name is a Symbol; a failing call must still end its span.
  const text = (key: 'name' | 'message' | 'stack') => {
    try {
      const value = error[key]
      return typeof value === 'string' && value !== '' ? value : undefined
    } catch {
      return undefined
    }
  }
  const code = (error as { code?: unknown }).code
  const codeText = typeof code === 'string' || typeof code === 'number' ? String(code) : undefined
  return [code ? codeText : undefined, text('name'), text('message'), text('stack'), offset]
}

/**
 * OTEL_TRACES_SAMPLER and its argument, as the specification names them; the default is
 * parentbased_always_on: a call is traced unless its caller's traceparent says it is not sampled.
 */
function samplerOf(name: string | undefined, argument: string | undefined): Sampler {
  const ratio = Math.min(1, Math.max(0, Number(argument ?? '1') || 0))
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler()
    case 'always_off':
      return new AlwaysOffSampler()
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio)
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() })
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) })
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() })
  }
}

function tracesUrl(env: Record<string, string | undefined>): string | undefined {
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
  if (env.OTEL_EXPORTER_OTLP_ENDPOINT) return `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`
  return undefined
}

/** OTEL_EXPORTER_OTLP_HEADERS: `key=value,key2=value2`, values URL-encoded (the specification's format). */
function parseHeaders(text: string): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const pair of text.split(',')) {
    const at = pair.indexOf('=')
    if (at <= 0) continue
    headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim())
  }
  return headers
}

function numberOr(text: string | undefined, fallback: number): number {
  const value = Number(text)
  return text !== undefined && Number.isFinite(value) && value > 0 ? value : fallback
}
