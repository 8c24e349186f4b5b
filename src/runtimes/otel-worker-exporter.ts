import type { Worker } from 'node:worker_threads'
import type { Attributes } from '@opentelemetry/api'
import { type ExportResult, ExportResultCode } from '@opentelemetry/core'
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base'
import { type OtlpExportConfig, otlpExporter } from './otel-exporter'
import { type SentSpan, sendSpan } from './otel-span-transfer'
import { startWorker, type WorkerEntry } from './worker-entry'

/** The entry is dist/otel-export-worker.js, or src/runtimes/otel-export-worker.ts through tsx. */
export type TraceExportWorkerOptions = WorkerEntry

interface Pending {
  spans: ReadableSpan[]
  done: (result: ExportResult) => void
}

/**
 * A SpanExporter for the BatchSpanProcessor that hands each batch, as plain data, to a worker thread
 * running the OTLP exporter (otel-export-worker.ts): the protobuf encoding and the HTTP request of
 * every batch leave the event loop that serves calls (bench/tracing.ts measured them, with the garbage
 * they leave, at about a third of what tracing costs a call). The batching, queue limits and sampling
 * stay the SDK's. The worker starts on the first batch and never keeps the process alive, except while
 * a batch is on its way (a flush at shutdown waits for it). A worker that cannot start (an entry
 * missing beside a bundle) is given up for the exporter in this thread, batches in flight included.
 */
export function workerSpanExporter(
  entry: TraceExportWorkerOptions,
  config: OtlpExportConfig,
  resource: Attributes,
): SpanExporter {
  const pending = new Map<number, Pending>()
  const drained: Array<() => void> = []
  let worker: Worker | undefined
  let answered = false
  let inThread: Promise<SpanExporter> | undefined
  let nextId = 0

  function settle(id: number, result: ExportResult): void {
    const waiting = pending.get(id)
    if (!waiting) return
    pending.delete(id)
    if (pending.size === 0) {
      worker?.unref()
      for (const resolve of drained.splice(0)) resolve()
    }
    waiting.done(result)
  }

  function exportInThread(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    inThread ??= otlpExporter(config)
    inThread.then(
      (exporter) => exporter.export(spans, done),
      (error: unknown) => done({ code: ExportResultCode.FAILED, error: error as Error }),
    )
  }

  function started(): Worker {
    if (worker) return worker
    const own = startWorker(entry, { workerData: { config, resource } })
    own.unref()
    own.on('message', ({ id, code, error }: { id: number; code: ExportResultCode; error?: string }) => {
      answered = true
      settle(id, { code, ...(error ? { error: new Error(error) } : {}) })
    })
    const lost = (error?: Error) => {
      if (worker !== own) return
      worker = undefined
      const stranded = [...pending.entries()]
      if (!answered) {
        // It never ran: this thread exports from now on, the stranded batches first.
        inThread ??= otlpExporter(config)
        for (const [id, { spans }] of stranded) exportInThread(spans, (result) => settle(id, result))
        return
      }
      for (const [id] of stranded) {
        settle(id, { code: ExportResultCode.FAILED, error: error ?? new Error('the trace export worker exited') })
      }
    }
    own.on('error', lost)
    own.on('exit', () => lost())
    worker = own
    return own
  }

  function send(spans: ReadableSpan[], message: { spans: SentSpan[] } | { shutdown: true }, done: Pending['done']) {
    const id = nextId++
    pending.set(id, { spans, done })
    const target = started()
    target.ref()
    target.postMessage({ id, ...message })
  }

  return {
    export(spans, done) {
      if (inThread && !answered) return exportInThread(spans, done)
      send(spans, { spans: spans.map(sendSpan) }, done)
    },
    forceFlush: () =>
      new Promise<void>((resolve) => {
        if (pending.size === 0) resolve()
        else drained.push(resolve)
      }),
    async shutdown() {
      if (inThread) await (await inThread).shutdown()
      const own = worker
      if (!own) return
      await new Promise<void>((resolve) => send([], { shutdown: true }, () => resolve()))
      await own.terminate()
    },
  }
}
