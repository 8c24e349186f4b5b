import { setPriority } from 'node:os'
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

/** A niceness the scheduler still runs under load (weight 110 against 1024): exports lag, never stall. */
const exportThreadNice = 10

const { config, resource } = workerData as { config: OtlpExportConfig; resource: Attributes }
lowerPriority()
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

/**
 * This thread, not the process, at nice 10 (on Linux a thread's nice value is its own): on a machine
 * whose cores are all serving calls, the export takes what the calls leave instead of a fair share of
 * their time; a batch still leaves within the BatchSpanProcessor's window (bench/tracing.ts counts every
 * span arriving). Where the platform refuses, the thread keeps the process's priority.
 */
function lowerPriority(): void {
  try {
    setPriority(0, exportThreadNice)
  } catch {}
}
