import { ToolError } from '../core/errors'
import type { ObjectStore } from './store'

export interface ObjectLockOptions {
  /** How long to wait for a lock another writer holds. */
  waitMs?: number
  /** A lock older than this is taken as abandoned by a writer that crashed while holding it. */
  staleMs?: number
}

/**
 * Runs `critical` while holding a lock object at `key`, so that read-modify-write sequences of a record
 * do not interleave, also across instances sharing the bucket. The lock is an object created only if
 * absent (ObjectStore.create) and deleted afterwards; critical sections must be short (a load and a save).
 */
export async function withObjectLock<T>(
  storage: ObjectStore,
  key: string,
  critical: () => Promise<T>,
  options: ObjectLockOptions = {},
): Promise<T> {
  const waitMs = options.waitMs ?? 10_000
  const staleMs = options.staleMs ?? 30_000
  const started = Date.now()
  for (let attempt = 0; !(await storage.create(key, new Date().toISOString())); attempt++) {
    const holder = await storage.head(key)
    if (holder && Date.now() - holder.lastModified.getTime() > staleMs) {
      await storage.delete(key)
      continue
    }
    if (Date.now() - started > waitMs) {
      throw new ToolError('unavailable', 'The record is being changed by another request.', {
        hint: 'Try again in a few seconds.',
        headers: { 'Retry-After': '2' },
      })
    }
    // Backs off from 5 ms to 200 ms, with jitter so that waiting writers do not retry in step.
    const delay = Math.min(5 * 2 ** attempt, 200) * (0.5 + Math.random() / 2)
    await new Promise((resolve) => setTimeout(resolve, delay))
  }
  try {
    return await critical()
  } finally {
    await storage.delete(key).catch(() => {})
  }
}
