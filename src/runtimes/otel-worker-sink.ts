import type { Worker } from 'node:worker_threads'
import type { Attributes } from '@opentelemetry/api'
import { ExportResultCode } from '@opentelemetry/core'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BatchSpanProcessor, type BufferConfig, type SpanExporter } from '@opentelemetry/sdk-trace-base'
import { type OtlpExportConfig, otlpExporter } from './otel-exporter'
import { type SpanRecord, type SpanSink, spanReplayer } from './otel-span-record'
import { startWorker, type WorkerEntry } from './worker-entry'

/** The entry is dist/otel-export-worker.js, or src/runtimes/otel-export-worker.ts through tsx. */
export type TraceExportWorkerOptions = WorkerEntry

/** The batch settings (OTEL_BSP_*), which the worker's BatchSpanProcessor applies. */
export type BatchSettings = Required<
  Pick<BufferConfig, 'scheduledDelayMillis' | 'maxQueueSize' | 'maxExportBatchSize' | 'exportTimeoutMillis'>
>

/** The instrumentation scope the replayed spans carry: toolport and its version. */
export interface TraceScope {
  name: string
  version: string
}

// Records leave this thread in groups of at most this many, and within one turn of the event loop.
const handOffSpans = 64

/**
 * A sink that hands each ended span's record to a worker thread (otel-export-worker.ts) within one turn
 * of the event loop; the worker replays it into the SDK's span and runs the SDK's BatchSpanProcessor
 * with the OTLP exporter, so the span objects, the batching, the queue limit, the protobuf encoding and
 * the HTTP requests all happen there. A record is posted at once, so its few objects die young (the
 * batch processor in this thread, keeping every span until its batch of 512 left, had cost about a
 * tenth of a small call's requests per second). The worker never keeps the process alive, except while
 * a flush or shutdown waits for it. A worker that cannot start (an entry missing beside a bundle) is
 * given up for a replay in this thread, with every record sent to it before it said it runs.
 */
export function workerSpanSink(
  entry: TraceExportWorkerOptions,
  config: OtlpExportConfig,
  resource: Attributes,
  scope: TraceScope,
  batch: BatchSettings,
): SpanSink {
  const waiting = new Map<number, () => void>()
  let worker: Worker | undefined
  // The worker said it runs: records sent to it are its own from then on.
  let ready = false
  let unconfirmed: SpanRecord[] = []
  let fallback: SpanSink | undefined
  let outbox: SpanRecord[] = []
  let scheduled = false
  let nextId = 0

  function inThread(): SpanSink {
    fallback ??= spanReplayer(
      new BatchSpanProcessor(deferredExporter(otlpExporter(config)), batch),
      resourceFromAttributes(resource),
      scope,
    )
    return fallback
  }

  function giveUp(own: Worker | undefined): void {
    if (worker !== own) return
    worker = undefined
    if (!ready) {
      // It never ran: this thread exports from now on, the records sent to it first.
      const sink = inThread()
      for (const record of unconfirmed) sink.add(record)
      unconfirmed = []
    }
    for (const done of waiting.values()) done()
    waiting.clear()
  }

  function started(): Worker | undefined {
    if (fallback) return undefined
    if (worker) return worker
    let own: Worker
    try {
      own = startWorker(entry, { workerData: { config, resource, scope, batch } })
    } catch {
      giveUp(undefined)
      inThread()
      return undefined
    }
    worker = own
    ready = false
    own.unref()
    own.on('message', (message: { ready?: true; id?: number }) => {
      if (message.ready) {
        ready = true
        unconfirmed = []
        return
      }
      const done = message.id === undefined ? undefined : waiting.get(message.id)
      if (!done) return
      waiting.delete(message.id as number)
      if (waiting.size === 0) own.unref()
      done()
    })
    own.on('error', () => giveUp(own))
    own.on('exit', () => giveUp(own))
    return own
  }

  function post(): void {
    scheduled = false
    if (outbox.length === 0) return
    const records = outbox
    outbox = []
    const target = started()
    if (!target) {
      const sink = inThread()
      for (const record of records) sink.add(record)
      return
    }
    if (!ready) unconfirmed.push(...records)
    target.postMessage({ records })
  }

  /** Asks the worker to flush or shut down, and waits for its answer (or its end). */
  function ask(target: Worker, message: { flush: true } | { shutdown: true }): Promise<void> {
    return new Promise((resolve) => {
      const id = nextId++
      waiting.set(id, resolve)
      target.ref()
      target.postMessage({ id, ...message })
    })
  }

  return {
    add(record: SpanRecord) {
      if (fallback) return fallback.add(record)
      // A worker that cannot keep up: past the queue's size records are dropped, as the SDK's queue drops spans.
      if (outbox.length >= batch.maxQueueSize) return
      outbox.push(record)
      if (outbox.length >= handOffSpans) post()
      else if (!scheduled) {
        scheduled = true
        setImmediate(post)
      }
    },
    async forceFlush() {
      post()
      const target = worker
      if (target) await ask(target, { flush: true })
      if (fallback) await fallback.forceFlush()
    },
    async shutdown() {
      post()
      const target = worker
      if (target) {
        await ask(target, { shutdown: true })
        await target.terminate()
      }
      if (fallback) await fallback.shutdown()
    },
  }
}

/** An exporter that is still loading, as the SDK's processor takes one: batches wait for it. */
function deferredExporter(loading: Promise<SpanExporter>): SpanExporter {
  return {
    export(spans, done) {
      loading.then(
        (exporter) => exporter.export(spans, done),
        (error: unknown) => done({ code: ExportResultCode.FAILED, error: error as Error }),
      )
    },
    async shutdown() {
      await (await loading).shutdown()
    },
    async forceFlush() {
      await (await loading).forceFlush?.()
    },
  }
}
