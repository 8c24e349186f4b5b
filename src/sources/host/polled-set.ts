import type { SourceStore } from './manifest-store'
import type { SourceSet, Wanted } from './source-set'

/**
 * A source set kept in step with a storage prefix (a tenant's sources, the operator's in the bucket):
 * listed again at most every refreshMs, when someone needs it; only manifests whose etag changed are
 * read. So a change another instance (or another writer of the bucket) made shows within refreshMs.
 */
export interface PolledSet {
  readonly set: SourceSet
  /** Lists the prefix again if the last look is older than refreshMs; answers whether anything changed. */
  refresh(): Promise<boolean>
  /** Written through this instance: the next poll must not take it for a change (nor miss a removal). */
  forget(id: string): void
  /** The etag of the manifest as this instance last read or wrote it: what a compare-and-swap replaces. */
  etagOf(id: string): string | undefined
  /** Written through this instance at this etag: the next poll keeps it as it is. */
  remember(id: string, etag: string): void
  /** Another instance announced a change: the next refresh lists again, whatever refreshMs says. */
  expire(): void
}

export function createPolledSet(
  store: SourceStore,
  set: SourceSet,
  options: { refreshMs: number; now: () => number },
): PolledSet {
  const etags = new Map<string, string>()
  let checkedAt = Number.NEGATIVE_INFINITY
  let checking: Promise<boolean> | undefined

  async function poll(): Promise<boolean> {
    const listed = await store.list()
    const files = new Map<string, Wanted>()
    for (const entry of listed) {
      if (etags.get(entry.id) === entry.etag && set.entries.has(entry.id)) {
        files.set(entry.id, 'unchanged')
        continue
      }
      const read = await store.read(entry)
      if (!read) continue
      etags.set(entry.id, read.etag)
      files.set(entry.id, { text: read.text, format: entry.format })
    }
    for (const id of [...etags.keys()]) if (!files.has(id)) etags.delete(id)
    return set.reconcile(files)
  }

  return {
    set,
    refresh() {
      if (options.now() - checkedAt < options.refreshMs) return checking ?? Promise.resolve(false)
      checking ??= poll().finally(() => {
        checkedAt = options.now()
        checking = undefined
      })
      return checking
    },
    forget: (id) => {
      etags.delete(id)
    },
    etagOf: (id) => etags.get(id),
    expire: () => {
      checkedAt = Number.NEGATIVE_INFINITY
    },
    remember: (id, etag) => {
      etags.set(id, etag)
    },
  }
}
