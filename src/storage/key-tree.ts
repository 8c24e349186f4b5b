import { ToolError } from '../core/errors'
import type { ObjectInfo, ObjectStore, PutOptions } from './store'

/**
 * The rule the fs driver gets from its filesystem, for stores whose keys are flat (S3, R2, memory): a
 * key is a file or a folder, never both, so `x` and `x/y` cannot exist together. Without it, concurrent
 * writes of `x` and `x/y` both succeeded on S3, leaving a file and a folder of one name that no sandbox
 * can check out.
 *
 * No lock and no clock: a write that may make a key new checks that no ancestor is an object and nothing
 * lies below `K/`, writes, and checks again; on a conflict it takes back its own version, and only that
 * (a delete conditional on the etag it wrote, so a newer version of K another writer put stays). Two
 * writers whose keys collide (x and x/y) each write before their second check, so at least one of them
 * sees the other and takes its key back: the store never keeps both. A compare-and-swap overwrite
 * (ifMatch) replaces a version that exists, whose own write settled the rule, so it needs no check; a
 * version deleted meanwhile makes it fail its condition instead of recreating the key unchecked.
 * `create` (records, which nothing writes below) is left as it is, and so is a put marked `record`.
 */
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

/** Wraps a store with flat keys so that put and copy keep the file-or-folder rule under concurrency. */
export function withKeyTree(store: ObjectStore): ObjectStore {
  /** Whether an ancestor of K is an object or something lies below K/. */
  async function collides(key: string): Promise<boolean> {
    const [ancestors, below] = await Promise.all([
      Promise.all(ancestorsOf(key).map((ancestor) => store.head(ancestor))),
      store.list(`${key}/`, { limit: 1 }),
    ])
    return ancestors.some((object) => object !== null) || below.objects.length > 0 || below.prefixes.length > 0
  }

  async function guardedWrite(
    key: string,
    options: Pick<PutOptions, 'ifMatch' | 'record'>,
    write: () => Promise<ObjectInfo>,
  ): Promise<ObjectInfo> {
    if (options.ifMatch !== undefined || options.record) return write()
    if (await collides(key)) throw conflictError()
    const info = await write()
    if (await collides(key)) {
      await store.delete(key, { ifMatch: info.etag }).catch(() => {})
      throw conflictError()
    }
    return info
  }

  return {
    ...store,
    async put(key, body, options = {}) {
      try {
        return await guardedWrite(key, options, () => store.put(key, body, options))
      } catch (error) {
        // Refused before the store read it: tell the producer of a stream body to stop.
        if (body instanceof ReadableStream && !body.locked) await body.cancel(error).catch(() => {})
        throw error
      }
    },
    copy: (fromKey, toKey) =>
      fromKey === toKey ? store.copy(fromKey, toKey) : guardedWrite(toKey, {}, () => store.copy(fromKey, toKey)),
  }
}
