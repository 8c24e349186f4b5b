import { parentPort, workerData } from 'node:worker_threads'
import type { Attributes } from '@opentelemetry/api'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { type OtlpExportConfig, otlpExporter } from './otel-exporter'
import { receiveSpan, type SentSpan } from './otel-span-transfer'

/**
 * The worker side of workerSpanExporter (otel-worker-exporter.ts): the OTLP exporter itself, so that
 * encoding each batch and sending it never takes the service's event loop. A worker entry point: it
 * starts listening when loaded (messages sent before wait in the port).
 */
const { config, resource } = workerData as { config: OtlpExportConfig; resource: Attributes }
const exporter = await otlpExporter(config)
const own = resourceFromAttributes(resource)

type Message = { id: number; spans: SentSpan[] } | { id: number; shutdown: true }

parentPort?.on('message', (message: Message) => {
  if ('shutdown' in message) {
    void exporter.shutdown().finally(() => parentPort?.postMessage({ id: message.id, code: 0 }))
    return
  }
  exporter.export(
    message.spans.map((span) => receiveSpan(span, own)),
    (result) => parentPort?.postMessage({ id: message.id, code: result.code, error: result.error?.message }),
  )
})
