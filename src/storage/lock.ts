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
 * absent (ObjectStore.create) holding a token of its holder, and deleted afterwards; critical sections
 * must be short (a load and a save).
 *
 * An abandoned lock (older than staleMs) is cleared by one waiter only: the one that creates the
 * takeover marker for that very lock object (named by its etag). Without it, two waiters that both saw
 * the stale lock would each delete "it", the second deleting the first's fresh lock, and both would enter.
 * A holder releases only its own lock (its token), so one whose lock was taken over cannot free another's.
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
  const token = `${new Date().toISOString()} ${crypto.randomUUID()}`
  for (let attempt = 0; !(await storage.create(key, token)); attempt++) {
    const holder = await storage.head(key)
    if (holder && Date.now() - holder.lastModified.getTime() > staleMs) {
      await clearStale(storage, key, holder.etag, token)
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
    await release(storage, key, token).catch(() => {})
  }
}

/** Deletes the stale lock object whose etag is `etag`, if this waiter wins its takeover marker. */
async function clearStale(storage: ObjectStore, key: string, etag: string, token: string): Promise<void> {
  const marker = `${key}.takeover-${etag.replace(/[^A-Za-z0-9-]/g, '')}`
  if (!(await storage.create(marker, token))) return
  try {
    // Still that object: a lock made since (by the winner of an earlier takeover) has another etag.
    const current = await storage.head(key)
    if (current?.etag === etag) await storage.delete(key)
  } finally {
    await storage.delete(marker).catch(() => {})
  }
}

async function release(storage: ObjectStore, key: string, token: string): Promise<void> {
  const current = await storage.get(key)
  if (current && new TextDecoder().decode(current.body) === token) await storage.delete(key)
}
