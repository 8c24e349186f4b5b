import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import { ToolError } from '../../core/errors'
import { resolveSecrets } from '../declared'
import type { SourceLoadContext, SourceProcess } from '../types'
import { onDemand } from './on-demand'
import { ProcessTransport } from './process-transport'
import type { WorkerManifest } from './worker-manifest'

/** A file of the caller's workspace, put where the worker can read it for one call. */
export interface StagedFile {
  name: string
  bytes: Uint8Array
}

/** The worker's answer to one request: its result, or its JSON-RPC error. */
export type WorkerAnswer = { result: unknown } | { error: { code: number; message: string; data?: unknown } }

export interface WorkerConnection {
  /**
   * Calls `method` with the params `paramsFor` makes of the paths the staged files have inside the
   * sandbox (removed again when the call ends), on the running worker, started first if need be.
   */
  invoke(
    method: string,
    files: readonly StagedFile[],
    paramsFor: (paths: string[]) => unknown,
    options: { signal: AbortSignal; timeoutMs: number },
  ): Promise<WorkerAnswer>
  /** Why the worker last stopped and the end of its stderr, for the source's status and errors. */
  note(): string
  /** Called when the worker stopped on its own (crashed, broke the protocol): note() has changed. */
  onStopped(listener: () => void): void
  close(): Promise<void>
}

// JSON-RPC 2.0 as a worker writes it: requests, notifications and responses, checked loosely (the
// fields a response needs are checked where it is matched to its request).
const JsonRpcLine = z.looseObject({ jsonrpc: z.literal('2.0') })

interface Running {
  process: SourceProcess
  transport: ProcessTransport
  pending: Map<string, (answer: WorkerAnswer | Error) => void>
}

/**
 * The source's one worker process, started on demand in the sandbox and spoken to with JSON-RPC 2.0,
 * one message per line: kept warm with an idle timer where the runtime allows (started per call where
 * it does not, as on Lambda), and started again after it died. Several calls may be in flight on it,
 * each matched to its answer by id. The framing, size cap and stderr tail are ProcessTransport's.
 */
export function createWorkerConnection(manifest: WorkerManifest, context: SourceLoadContext): WorkerConnection {
  let lastNote = ''
  let nextId = 1
  const stoppedListeners: Array<() => void> = []
  const stoppedByUs = new WeakSet<ProcessTransport>()

  async function open(lost: () => void): Promise<Running> {
    if (!context.processes) throw new Error('this runtime cannot start workers (no sandbox)')
    const process = await context.processes.start({
      argv: manifest.command,
      env: resolveSecrets(manifest.env, context.secret, 'variable'),
      image: manifest.image,
      mounts: manifest.mounts ?? [],
      label: `${context.owner.kind === 'tenant' ? context.owner.tenant : 'operator'}/${manifest.id}`,
      // A worker has the network the operator's egress policy opens (none by default), never more.
      egress: { tenant: context.owner.kind === 'tenant' ? context.owner.tenant : 'operator' },
    })
    const transport = new ProcessTransport(
      process,
      (line) => JsonRpcLine.parse(JSON.parse(line)) as unknown as JSONRPCMessage,
      `the worker of ${manifest.id}`,
    )
    const running: Running = { process, transport, pending: new Map() }
    transport.onmessage = (message) => answered(running, message as Record<string, unknown>)
    transport.onclose = () => {
      const note = transport.problemNote()
      // A stop toolport asked for (idle, close) is no news: only a worker that died or broke says why.
      if (!stoppedByUs.has(transport)) {
        lastNote = note || '; it exited'
        for (const listener of stoppedListeners) listener()
      }
      const stopped = new Error(`the worker of ${manifest.id} stopped${note}`)
      for (const settle of running.pending.values()) settle(stopped)
      running.pending.clear()
      lost()
    }
    await transport.start()
    return running
  }

  /** A response settles the request of its id; a request of the worker's own is refused (toolport serves none). */
  function answered(running: Running, message: Record<string, unknown>): void {
    const id = message.id
    if (typeof message.method === 'string') {
      if (id === undefined || id === null) return
      void running.transport
        .send({
          jsonrpc: '2.0',
          id: id as string,
          error: { code: -32601, message: 'toolport answers no requests from a worker' },
        } as JSONRPCMessage)
        .catch(() => {})
      return
    }
    const settle = running.pending.get(String(id))
    if (!settle) return
    running.pending.delete(String(id))
    const error = message.error as { code?: unknown; message?: unknown; data?: unknown } | undefined
    if (error && typeof error.code === 'number' && typeof error.message === 'string') {
      settle({
        error: { code: error.code, message: error.message, ...(error.data !== undefined ? { data: error.data } : {}) },
      })
    } else if ('result' in message) settle({ result: message.result })
    else settle(new Error(`the worker of ${manifest.id} answered with something that is not a JSON-RPC response`))
  }

  const worker = onDemand({
    open,
    close: ({ transport }) => {
      stoppedByUs.add(transport)
      return transport.close()
    },
    keepWarm: context.keepWarm,
    idleMs: manifest.idle_seconds * 1000,
  })

  async function request(running: Running, method: string, params: unknown, signal: AbortSignal, timeoutMs: number) {
    const id = String(nextId++)
    return new Promise<WorkerAnswer>((resolve, reject) => {
      const done = (answer: WorkerAnswer | Error) => {
        clearTimeout(timer)
        signal.removeEventListener('abort', aborted)
        running.pending.delete(id)
        if (answer instanceof Error) reject(answer)
        else resolve(answer)
      }
      const timer = setTimeout(
        () => done(new ToolError('timeout', `The worker of ${manifest.id} did not answer ${method} in time.`)),
        timeoutMs,
      )
      const aborted = () => done(signal.reason instanceof Error ? signal.reason : new Error('the call was cancelled'))
      signal.addEventListener('abort', aborted, { once: true })
      running.pending.set(id, done)
      running.transport.send({ jsonrpc: '2.0', id, method, params } as JSONRPCMessage).catch(done)
    })
  }

  return {
    note: () => lastNote,
    onStopped: (listener) => stoppedListeners.push(listener),
    close: worker.close,
    invoke: (method, files, paramsFor, options) =>
      worker.use(async (running) => {
        let staged: { paths: string[]; remove(): Promise<void> } | undefined
        try {
          if (files.length > 0) {
            if (!running.process.stage) throw new Error('this runtime cannot hand files to a worker')
            staged = await running.process.stage(files)
          }
          return await request(running, method, paramsFor(staged?.paths ?? []), options.signal, options.timeoutMs)
        } finally {
          await staged?.remove().catch(() => {})
        }
      }),
  }
}
