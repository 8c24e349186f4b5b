import { setPriority } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import type { Attributes } from '@opentelemetry/api'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { type OtlpExportConfig, otlpExporter } from './otel-exporter'
import { type SpanRecord, spanReplayer } from './otel-span-record'
import type { BatchSettings, TraceScope } from './otel-worker-sink'

/**
 * The worker side of workerSpanSink (otel-worker-sink.ts): each recorded span replayed into the SDK's
 * span, the SDK's BatchSpanProcessor and the OTLP exporter, so that making each span, batching it,
 * encoding each batch and sending it never take the service's event loop. A worker entry point: it
 * starts listening when loaded (messages sent before wait in the port), and says so once it runs.
 */

/** A niceness the scheduler still runs under load (weight 110 against 1024): exports lag, never stall. */
const exportThreadNice = 10

const { config, resource, scope, batch } = workerData as {
  config: OtlpExportConfig
  resource: Attributes
  scope: TraceScope
  batch: BatchSettings
}
lowerPriority()
const sink = spanReplayer(
  new BatchSpanProcessor(await otlpExporter(config), batch),
  resourceFromAttributes(resource),
  scope,
)

type Message = { records: SpanRecord[] } | { id: number; flush: true } | { id: number; shutdown: true }

parentPort?.on('message', (message: Message) => {
  if ('records' in message) {
    for (const record of message.records) sink.add(record)
    return
  }
  const settled = 'shutdown' in message ? sink.shutdown() : sink.forceFlush()
  void settled.catch(() => {}).finally(() => parentPort?.postMessage({ id: message.id }))
})
parentPort?.postMessage({ ready: true })

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
