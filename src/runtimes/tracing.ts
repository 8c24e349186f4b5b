import { serviceVersion } from '../app'
import type { Tracing } from '../core/tracing'
import type { TraceExportWorkerOptions } from './otel-worker-sink'

/**
 * The OpenTelemetry tracing the standard variables ask for, or undefined (off): the SDK is loaded only
 * when an OTLP endpoint is configured, so a service without tracing neither loads nor pays for it.
 */
export async function tracingFromEnv(
  env: Record<string, string | undefined>,
  options: { exportWorker?: TraceExportWorkerOptions } = {},
): Promise<Tracing | undefined> {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return undefined
  return (await import('./otel-tracing')).otelTracing(env, serviceVersion, options)
}
