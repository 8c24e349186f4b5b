import { Worker, type WorkerOptions } from 'node:worker_threads'

/** A worker thread's entry point: its built file (dist/…-worker.js), or its .ts source. */
export interface WorkerEntry {
  /** The built entry, or its .ts source with `typescript`. */
  url: URL
  /** Load the source through tsx (npm run dev, tests): register tsx's hooks in the worker first. */
  typescript?: boolean
}

/**
 * Starts `entry` in a worker thread. Loader hooks are per thread: a worker does not inherit the tsx
 * that runs its parent, so a source entry registers tsx's hooks before it imports itself.
 */
export function startWorker(entry: WorkerEntry, options: WorkerOptions = {}): Worker {
  if (!entry.typescript) return new Worker(entry.url, options)
  return new Worker(
    `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry.url.href)}) })`,
    { ...options, eval: true },
  )
}
