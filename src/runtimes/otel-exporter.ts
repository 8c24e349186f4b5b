import type { SpanExporter } from '@opentelemetry/sdk-trace-base'

/** Where and how spans are exported: what the standard OTEL_EXPORTER_OTLP_* variables say. */
export interface OtlpExportConfig {
  url: string
  /** http/protobuf (the specification's default, and the cheaper to encode) or http/json. */
  protocol: string
  headers?: Record<string, string>
}

/** The OpenTelemetry OTLP/HTTP exporter for `config`; only the protocol's package is loaded. */
export async function otlpExporter(config: OtlpExportConfig): Promise<SpanExporter> {
  const { OTLPTraceExporter } =
    config.protocol === 'http/json'
      ? await import('@opentelemetry/exporter-trace-otlp-http')
      : await import('@opentelemetry/exporter-trace-otlp-proto')
  return new OTLPTraceExporter({ url: config.url, ...(config.headers ? { headers: config.headers } : {}) })
}
