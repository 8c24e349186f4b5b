import type { ObjectStore } from '../../storage/store'

/** One manifest file as storage holds it. */
export interface StoredManifest {
  /** The source id: the file name without its extension. */
  id: string
  etag: string
  format: 'json' | 'yaml'
}

/**
 * Manifests kept as one object each under a prefix: `sources/tenants/{tenant}/{id}.json` for a tenant's
 * sources (PUT /v1/sources/{id}), `sources/operator/{id}.json|.yaml` for the operator's. Listing
 * returns etags, so a poll reads only what changed.
 */
export interface SourceStore {
  list(): Promise<StoredManifest[]>
  read(entry: StoredManifest): Promise<{ text: string; etag: string } | undefined>
  /**
   * Stores the manifest by compare-and-swap: over the version at `etag`, or only if none exists (null).
   * PreconditionFailed when another writer changed it since it was read. Answers the new etag.
   */
  write(id: string, text: string, etag: string | null): Promise<string>
  /** Removes the version at `etag` (undefined: whatever is there). */
  remove(id: string, etag?: string): Promise<void>
}

const manifestName = /^([a-z][a-z0-9-]{0,31})\.(json|ya?ml)$/

export function createSourceStore(storage: ObjectStore, prefix: string): SourceStore {
  return {
    async list() {
      const found: StoredManifest[] = []
      let cursor: string | undefined
      // At most a few thousand sources per prefix; pages keep each answer small.
      for (let page = 0; page < 20; page++) {
        const result = await storage.list(prefix, { delimiter: '/', ...(cursor ? { cursor } : {}) })
        for (const object of result.objects) {
          const match = manifestName.exec(object.key.slice(prefix.length))
          if (match?.[1]) found.push({ id: match[1], etag: object.etag, format: match[2] === 'json' ? 'json' : 'yaml' })
        }
        cursor = result.cursor
        if (!cursor) break
      }
      return found
    },
    async read(entry) {
      const extension = entry.format === 'json' ? 'json' : 'yaml'
      const object =
        (await storage.get(`${prefix}${entry.id}.${extension}`)) ??
        (entry.format === 'yaml' ? await storage.get(`${prefix}${entry.id}.yml`) : null)
      return object ? { text: new TextDecoder().decode(object.body), etag: object.etag } : undefined
    },
    async write(id, text, etag) {
      const condition = etag === null ? { ifNoneMatch: '*' as const } : { ifMatch: etag }
      return (await storage.put(`${prefix}${id}.json`, text, { contentType: 'application/json', ...condition })).etag
    },
    async remove(id, etag) {
      await storage.delete(`${prefix}${id}.json`, etag === undefined ? {} : { ifMatch: etag })
    },
  }
}
