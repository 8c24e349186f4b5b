import { type ErrorCode, ToolError } from '../core/errors'

/**
 * CPU-heavy work a tool hands off the event loop: extracting a web page's text (linkedom, Readability,
 * turndown), laying out a PDF with pdf-lib, reading a spreadsheet. Each is a named task of plain data in
 * and plain data out, listed in its family's table (web/tasks.ts, documents/tasks.ts), so the same code
 * runs in a worker thread on Node (runtimes/offload-pool.ts) and in process where there is none: on
 * Lambda one call has its execution environment to itself, and Workers have no threads.
 */
export interface Offload {
  run(task: string, input: unknown, options: OffloadOptions): Promise<unknown>
}

export interface OffloadOptions {
  signal: AbortSignal
  /** Past this the worker is stopped and the task fails with a ToolError `timeout`. */
  timeoutMs?: number
}

/** Tasks take their input and, when run in this thread, the call's signal (in a worker, aborting stops it). */
// biome-ignore lint/suspicious/noExplicitAny: a table holds tasks of different inputs
export type TaskTable = Record<string, (input: any, signal?: AbortSignal) => Promise<unknown>>

/** Runs `task` of `table` through the deployment's offload, or in this thread when it has none. */
export async function offloaded<T extends TaskTable, N extends keyof T & string>(
  offload: Offload | undefined,
  table: T,
  task: N,
  input: Parameters<T[N]>[0],
  options: OffloadOptions,
): Promise<Awaited<ReturnType<T[N]>>> {
  if (!offload) return (await (table[task] as T[N])(input, options.signal)) as Awaited<ReturnType<T[N]>>
  return (await offload.run(task, input, options)) as Awaited<ReturnType<T[N]>>
}

/** An error as it crosses from a worker: ToolErrors keep code, hint and details; RangeErrors their kind. */
export type CarriedError =
  | { kind: 'tool'; code: ErrorCode; message: string; hint: string; details?: Record<string, unknown> }
  | { kind: 'error'; name: string; message: string }

export function carryError(error: unknown): CarriedError {
  if (error instanceof ToolError) {
    return {
      kind: 'tool',
      code: error.code,
      message: error.message,
      hint: error.hint,
      ...(error.details ? { details: error.details } : {}),
    }
  }
  const { name, message } = error instanceof Error ? error : { name: 'Error', message: String(error) }
  return { kind: 'error', name, message }
}

export function rebuildError(carried: CarriedError): Error {
  if (carried.kind === 'tool') {
    return new ToolError(carried.code, carried.message, {
      hint: carried.hint,
      ...(carried.details ? { details: carried.details } : {}),
    })
  }
  // A stack overflow stays a RangeError, which the call path answers as input nested too deeply.
  const rebuilt = carried.name === 'RangeError' ? new RangeError(carried.message) : new Error(carried.message)
  if (carried.name !== 'RangeError') rebuilt.name = carried.name
  return rebuilt
}
