import { Worker } from 'node:worker_threads'
import type { CommandName } from './command-names'
import { ShellSyntaxError, ShellTooComplexError } from './shell-syntax'

/** Finds the programs a command line runs (commandNames), wherever that work is done. */
export type CommandLister = (command: string) => Promise<CommandName[]>

export interface PolicyWorkerOptions {
  /** The built policy-worker entry (dist/policy-worker.js), or its .ts source with `typescript`. */
  url: URL
  /** Load the source through tsx (npm run dev, tests): register tsx's hooks in the worker first. */
  typescript?: boolean
  /** A check still running after this ends with ShellTooComplexError, and its worker is replaced. */
  timeoutMs?: number
}

type Answer = { id: number; names: CommandName[] } | { id: number; error: { name: string; message: string } }

/**
 * commandNames in a worker thread. The parse and walk of a hostile command take up to a couple of seconds
 * of CPU (GopherJS, see command-names.ts); on the main thread that would stall every other call of the
 * service. One worker, started on the first check and unreferenced (it never keeps the process alive),
 * answers checks one at a time; a check over the time limit, or a crash, costs only that worker.
 */
export function createWorkerLister(options: PolicyWorkerOptions): CommandLister & { close(): Promise<void> } {
  const timeoutMs = options.timeoutMs ?? 10_000
  interface Check {
    id: number
    command: string
    resolve: (names: CommandName[]) => void
    reject: (error: Error) => void
  }
  let worker: Worker | undefined
  let nextId = 0
  const queue: Check[] = []
  // The one check the worker has; its time limit runs from when the worker got it, not from the queue.
  let current: { check: Check; worker: Worker; timer: ReturnType<typeof setTimeout> } | undefined

  function started(): Worker {
    if (worker) return worker
    // Loader hooks are per thread: a worker does not inherit the tsx that runs its parent.
    const created = options.typescript
      ? new Worker(
          `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(options.url.href)}) })`,
          { eval: true },
        )
      : new Worker(options.url)
    created.unref()
    let answered = false
    created.on('message', (answer: Answer) => {
      answered = true
      if (current?.worker !== created || current.check.id !== answer.id) return
      const { check } = finish()
      if ('names' in answer) check.resolve(answer.names)
      else check.reject(rebuild(answer.error))
      pump()
    })
    const gone = (error?: Error) => {
      if (worker === created) worker = undefined
      if (current?.worker !== created) return
      const { check } = finish()
      // A worker that crashed hands its check to a fresh one; one that never answered anything cannot
      // start at all (a broken install), and is not restarted forever.
      if (answered) queue.unshift(check)
      else check.reject(new Error(`the command policy's worker could not start: ${error?.message ?? 'it exited'}`))
      pump()
    }
    created.on('error', gone)
    created.on('exit', () => gone())
    worker = created
    return created
  }

  function finish() {
    const done = current as NonNullable<typeof current>
    clearTimeout(done.timer)
    current = undefined
    return done
  }

  function pump() {
    const check = current ? undefined : queue.shift()
    if (!check) return
    const target = started()
    const timer = setTimeout(() => {
      finish()
      check.reject(new ShellTooComplexError(`checking it took longer than ${timeoutMs / 1000} s`))
      // The worker may be deep in a parse it cannot leave: a fresh one takes the next check.
      if (worker === target) worker = undefined
      void target.terminate()
      pump()
    }, timeoutMs)
    current = { check, worker: target, timer }
    target.postMessage({ id: check.id, command: check.command })
  }

  const lister = (command: string) =>
    new Promise<CommandName[]>((resolve, reject) => {
      queue.push({ id: nextId++, command, resolve, reject })
      pump()
    })
  return Object.assign(lister, {
    async close() {
      const stopping = worker
      worker = undefined
      await stopping?.terminate()
    },
  })
}

function rebuild(error: { name: string; message: string }): Error {
  if (error.name === 'ShellTooComplexError') return new ShellTooComplexError(error.message)
  if (error.name === 'ShellSyntaxError') return new ShellSyntaxError(error.message)
  return new Error(error.message)
}
