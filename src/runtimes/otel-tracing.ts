import {
  type Attributes,
  type Context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { resourceFromAttributes } from '@opentelemetry/resources'
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base'
import type { SpanAttributes, TraceCarrier, TraceSpan, Tracing } from '../core/tracing'
import { type OtlpExportConfig, otlpExporter } from './otel-exporter'
import { pooledIdGenerator } from './otel-ids'
import type { TraceExportWorkerOptions } from './otel-worker-processor'

/**
 * Tracing with the OpenTelemetry SDK, exported over OTLP/HTTP, when the standard variables ask for it:
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT (+ /v1/traces), and neither
 * OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none. OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL picks
 * http/protobuf (the specification's default) or http/json; OTEL_BSP_* tune the batches. Nothing is registered globally: the tracer
 * provider, the W3C propagator and every parent context are this object's, passed explicitly.
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
  // On Node the encoding and sending happen in a worker thread; where there is none to start (Lambda,
  // whose function freezes after each response), in this one.
  const batch = {
    scheduledDelayMillis: numberOr(env.OTEL_BSP_SCHEDULE_DELAY, 5_000),
    maxQueueSize: numberOr(env.OTEL_BSP_MAX_QUEUE_SIZE, 2_048),
    maxExportBatchSize: numberOr(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, 512),
    exportTimeoutMillis: numberOr(env.OTEL_BSP_EXPORT_TIMEOUT, 30_000),
  }
  const processor = options.exportWorker
    ? (await import('./otel-worker-processor')).workerSpanProcessor(options.exportWorker, config, resource, batch)
    : new BatchSpanProcessor(await otlpExporter(config), batch)
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes(resource),
    spanProcessors: [processor],
    sampler: samplerOf(env.OTEL_TRACES_SAMPLER, env.OTEL_TRACES_SAMPLER_ARG),
    idGenerator: pooledIdGenerator(),
  })
  const tracer = provider.getTracer('toolport', version)
  const propagator = new W3CTraceContextPropagator()

  const kinds = { server: SpanKind.SERVER, internal: SpanKind.INTERNAL, client: SpanKind.CLIENT } as const

  /**
   * One span as toolport sees it: methods on the prototype (no closures made per span), and the span's
   * context made only for a child or a carrier, which most spans (storage requests) never need.
   */
  class OtelSpan implements TraceSpan {
    readonly recording: boolean
    #context: Context | undefined
    constructor(readonly span: Span) {
      this.recording = span.isRecording()
    }
    /** This span as a parent context (its children's, its carrier's). */
    context(): Context {
      this.#context ??= trace.setSpan(ROOT_CONTEXT, this.span)
      return this.#context
    }
    setAttributes(attributes: SpanAttributes): void {
      // An undefined value is dropped by the SDK (a no-op warning to its diag logger, which is unset).
      this.span.setAttributes(attributes as Attributes)
    }
    child(name: string, attributes: SpanAttributes = {}, kind: 'internal' | 'client' = 'internal'): TraceSpan {
      return new OtelSpan(
        tracer.startSpan(name, { kind: kinds[kind], attributes: attributes as Attributes }, this.context()),
      )
    }
    carrier(): TraceCarrier {
      const carrier: Record<string, string> = {}
      propagator.inject(this.context(), carrier, defaultTextMapSetter)
      return carrier
    }
    fail(error: unknown): void {
      this.span.setStatus({
        code: SpanStatusCode.ERROR,
        message: error instanceof Error ? error.message : String(error),
      })
      if (error instanceof Error) this.span.recordException(error)
    }
    end(): void {
      this.span.end()
    }
  }

  /** The parent's context: the caller's W3C headers (extracted), or a span of ours. */
  function parentOf(parent: TraceCarrier | TraceSpan | undefined): Context {
    if (!parent) return ROOT_CONTEXT
    // A span of ours is its own parent context, without a round trip through W3C headers.
    if (parent instanceof OtelSpan) return parent.context()
    if ('carrier' in parent && typeof parent.carrier === 'function') {
      return propagator.extract(ROOT_CONTEXT, parent.carrier(), defaultTextMapGetter)
    }
    return propagator.extract(ROOT_CONTEXT, parent as TraceCarrier, defaultTextMapGetter)
  }

  return {
    enabled: true,
    start: (name, options) =>
      new OtelSpan(
        tracer.startSpan(
          name,
          { kind: kinds[options.kind ?? 'internal'], attributes: (options.attributes ?? {}) as Attributes },
          parentOf(options.parent),
        ),
      ),
    flush: () => provider.forceFlush(),
  }
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
