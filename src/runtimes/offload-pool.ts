import { availableParallelism } from 'node:os'
import type { Worker } from 'node:worker_threads'
import { ToolError } from '../core/errors'
import { type CarriedError, type Offload, type OffloadOptions, rebuildError } from '../tools/offload'
import { startWorker, type WorkerEntry } from './worker-entry'

/** The entry is dist/offload-worker.js, or src/runtimes/offload-worker.ts through tsx. */
export interface OffloadWorkerOptions extends WorkerEntry {
  /** Worker threads at most (default: the machine's cores, 1 to 4). */
  size?: number
  /** Tasks waiting for a worker at most; past it a call gets 429 (default 64). */
  maxQueue?: number
  /** Heap of one worker in MB (default 2048): a task past it fails alone, not the service. */
  maxHeapMb?: number
}

type Answer = { id: number; output: unknown } | { id: number; error: CarriedError }

interface Task {
  id: number
  task: string
  input: unknown
  options: OffloadOptions
  resolve: (output: unknown) => void
  reject: (error: unknown) => void
  onAbort: () => void
}

interface Slot {
  worker: Worker
  task?: Task
  timer?: ReturnType<typeof setTimeout>
  /** Whether this worker ever answered: one that fails before that cannot start at all. */
  answered: boolean
}

/**
 * The Offload of the Node runtime: up to `size` worker threads, started on first use and unreferenced
 * (they never keep the process alive), each running one task at a time. A task that is cancelled, runs
 * past its time limit or exhausts its heap costs only its worker, which is replaced.
 */
export function createOffloadPool(options: OffloadWorkerOptions): Offload & { close(): Promise<void> } {
  const size = options.size ?? Math.max(1, Math.min(4, availableParallelism()))
  const maxQueue = options.maxQueue ?? 64
  const slots: Slot[] = []
  const queue: Task[] = []
  let nextId = 0

  function spawn(): Slot {
    const worker = startWorker(options, { resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb ?? 2048 } })
    worker.unref()
    const slot: Slot = { worker, answered: false }
    worker.on('message', (answer: Answer) => {
      slot.answered = true
      const task = slot.task
      if (!task || task.id !== answer.id) return
      release(slot)
      if ('error' in answer) task.reject(rebuildError(answer.error))
      else task.resolve(answer.output)
      pump()
    })
    const gone = (error?: Error) => {
      const index = slots.indexOf(slot)
      if (index === -1) return
      slots.splice(index, 1)
      const task = slot.task
      if (task) {
        release(slot)
        task.reject(stopped(error, slot.answered))
      }
      pump()
    }
    worker.on('error', gone)
    worker.on('exit', () => gone())
    slots.push(slot)
    return slot
  }

  function release(slot: Slot): void {
    clearTimeout(slot.timer)
    slot.task?.options.signal.removeEventListener('abort', slot.task.onAbort)
    slot.task = undefined
    slot.timer = undefined
  }

  /** Stops a busy worker (cancel, time limit): its task is settled by the caller, the slot freed. */
  function retire(slot: Slot): void {
    const index = slots.indexOf(slot)
    if (index !== -1) slots.splice(index, 1)
    release(slot)
    void slot.worker.terminate()
    pump()
  }

  function pump(): void {
    while (queue.length > 0) {
      const slot = slots.find((candidate) => !candidate.task) ?? (slots.length < size ? spawn() : undefined)
      if (!slot) return
      const task = queue.shift() as Task
      slot.task = task
      const { timeoutMs } = task.options
      if (timeoutMs !== undefined) {
        slot.timer = setTimeout(() => {
          retire(slot)
          task.reject(
            new ToolError('timeout', `The work took longer than ${Math.round(timeoutMs / 1000)} s.`, {
              hint: 'Send a smaller input.',
            }),
          )
        }, timeoutMs)
      }
      slot.worker.postMessage({ id: task.id, task: task.task, input: task.input })
    }
  }

  return {
    run(task, input, runOptions) {
      return new Promise((resolve, reject) => {
        const { signal } = runOptions
        if (signal.aborted) return reject(signal.reason)
        if (queue.length >= maxQueue) {
          return reject(
            new ToolError('rate_limited', 'Too many heavy calls are waiting on this server.', {
              hint: 'Wait a few seconds and try again.',
              headers: { 'Retry-After': '5' },
            }),
          )
        }
        const entry: Task = {
          id: nextId++,
          task,
          input,
          options: runOptions,
          resolve,
          reject,
          onAbort: () => {
            const waiting = queue.indexOf(entry)
            if (waiting !== -1) queue.splice(waiting, 1)
            const busy = slots.find((slot) => slot.task === entry)
            if (busy) retire(busy)
            reject(signal.reason)
          },
        }
        signal.addEventListener('abort', entry.onAbort, { once: true })
        queue.push(entry)
        pump()
      })
    },
    async close() {
      const stopping = slots.splice(0)
      await Promise.all(stopping.map((slot) => slot.worker.terminate()))
    },
  }
}

function stopped(error: Error | undefined, answered: boolean): Error {
  if ((error as NodeJS.ErrnoException | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY') {
    return new ToolError('size_exceeded', 'The input needs more memory than one call may use.', {
      hint: 'Send a smaller input, or split it into several calls.',
      cause: error,
    })
  }
  // One that never answered anything cannot start at all: a broken install, not the input's fault.
  const reason = answered ? 'stopped unexpectedly' : 'could not start'
  return new Error(`the offload worker ${reason}: ${error?.message ?? 'it exited'}`)
}
