import { sha256Hex } from '../core/digest'
import { ToolError } from '../core/errors'
import { withObjectLock } from './lock'
import type { ObjectInfo, ObjectStore } from './store'

/**
 * The rule the fs driver gets from its filesystem, for stores whose keys are flat (S3, R2, memory): a
 * key is a file or a folder, never both, so `x` and `x/y` cannot exist together. Without it, concurrent
 * writes of `x` and `x/y` both succeeded on S3, leaving a file and a folder of one name that no sandbox
 * can check out.
 *
 * Every put, copy and delete of a key K holds a lock on K alone (an object created only if absent, see
 * lock.ts), so writers of one key take turns but writers of different keys never wait for each other.
 * Under it a write checks that no ancestor of K is an object and nothing lies below `K/`, writes, and —
 * when K is new — checks again, taking its object back on a conflict. Two writers whose keys collide (x
 * and x/y) each write before their second check, so at least one of them sees the other and takes its
 * own key back: the store never keeps both. An overwrite of a key that existed before needs no second
 * check: its creator's check settled it, and deletes hold the key's lock, so it cannot vanish between the
 * first check and the write. `create` (locks and records, which nothing writes below) is left as it is.
 */
const lockPrefix = '.toolport-key-locks/'

export function conflictError(): ToolError {
  return new ToolError('conflict', 'A file and a folder cannot have the same name.', {
    hint: 'A path cannot go through an existing file, and a file cannot replace a folder; choose another name or delete the one in the way first.',
    details: { field: 'path' },
  })
}

/** The parents of a key, shortest first: 'a/b/c' has 'a' and 'a/b'. */
function ancestorsOf(key: string): string[] {
  const segments = key.split('/')
  return segments.slice(0, -1).map((_, index) => segments.slice(0, index + 1).join('/'))
}

/** Wraps a store with flat keys so that put, copy and delete keep the file-or-folder rule under concurrency. */
export function withKeyTree(store: ObjectStore): ObjectStore {
  const lockOf = async (key: string) => `${lockPrefix}${await sha256Hex(key)}.lock`
  const locked = async <T>(key: string, critical: () => Promise<T>) =>
    withObjectLock(store, await lockOf(key), critical)

  /** Whether K exists, and whether an ancestor is an object or something lies below K/. */
  async function inspect(key: string): Promise<{ exists: boolean; collides: boolean }> {
    const [self, ancestors, below] = await Promise.all([
      store.head(key),
      Promise.all(ancestorsOf(key).map((ancestor) => store.head(ancestor))),
      store.list(`${key}/`, { limit: 1 }),
    ])
    const collides =
      ancestors.some((object) => object !== null) || below.objects.length > 0 || below.prefixes.length > 0
    return { exists: self !== null, collides }
  }

  async function guardedWrite(key: string, write: () => Promise<ObjectInfo>): Promise<ObjectInfo> {
    return locked(key, async () => {
      const before = await inspect(key)
      if (before.collides) throw conflictError()
      const info = await write()
      if (!before.exists && (await inspect(key)).collides) {
        await store.delete(key)
        throw conflictError()
      }
      return info
    })
  }

  return {
    ...store,
    async put(key, body, options) {
      try {
        return await guardedWrite(key, () => store.put(key, body, options))
      } catch (error) {
        // Refused before the store read it: tell the producer of a stream body to stop.
        if (body instanceof ReadableStream && !body.locked) await body.cancel(error).catch(() => {})
        throw error
      }
    },
    copy: (fromKey, toKey) =>
      fromKey === toKey ? store.copy(fromKey, toKey) : guardedWrite(toKey, () => store.copy(fromKey, toKey)),
    delete: (key) => locked(key, () => store.delete(key)),
  }
}
