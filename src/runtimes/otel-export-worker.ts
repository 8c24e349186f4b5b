import { setPriority } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import type { Attributes } from '@opentelemetry/api'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { type OtlpExportConfig, otlpExporter } from './otel-exporter'
import { receiveSpan, type SentSpan } from './otel-span-transfer'
import type { BatchSettings } from './otel-worker-processor'

/**
 * The worker side of workerSpanProcessor (otel-worker-processor.ts): the SDK's BatchSpanProcessor and
 * the OTLP exporter, so that batching each span, encoding each batch and sending it never take the
 * service's event loop. A worker entry point: it starts listening when loaded (messages sent before
 * wait in the port), and says so once it runs.
 */

/** A niceness the scheduler still runs under load (weight 110 against 1024): exports lag, never stall. */
const exportThreadNice = 10

const { config, resource, batch } = workerData as {
  config: OtlpExportConfig
  resource: Attributes
  batch: BatchSettings
}
lowerPriority()
const processor = new BatchSpanProcessor(await otlpExporter(config), batch)
const own = resourceFromAttributes(resource)

type Message = { spans: SentSpan[] } | { id: number; flush: true } | { id: number; shutdown: true }

parentPort?.on('message', (message: Message) => {
  if ('spans' in message) {
    for (const span of message.spans) processor.onEnd(receiveSpan(span, own))
    return
  }
  const settled = 'shutdown' in message ? processor.shutdown() : processor.forceFlush()
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
