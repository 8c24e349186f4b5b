import { ToolError } from '../core/errors'
import type { ListResult, ObjectBody, ObjectInfo, ObjectStore } from '../storage/store'

/**
 * Per-tenant storage quota (TOOLPORT_TENANT_QUOTA_BYTES). The usage of a tenant is the sum of its
 * objects under tenants/{tenant}/workspaces/, listed from storage and cached for a short time; writes
 * and deletes made through this instance adjust the cached sum. Other instances (more processes,
 * Lambda) keep caches of their own, so across instances the quota is approximate: it can be overshot by
 * what the others wrote within one TTL.
 */
export interface TenantQuota {
  readonly limitBytes: number
  /** Bytes the tenant stores now (cached up to the TTL). */
  usage(storage: ObjectStore, tenant: string): Promise<number>
  /**
   * Throws size_exceeded when replacing `previousBytes` with `nextBytes` would go over the quota;
   * otherwise reserves the difference at once, so concurrent writes cannot all pass on the same usage.
   * A write that then fails must give it back with adjust().
   */
  assertRoom(
    storage: ObjectStore,
    tenant: string,
    path: string,
    previousBytes: number,
    nextBytes: number,
  ): Promise<void>
  /** The same check as assertRoom, reserving nothing: for a dry run, which writes nothing. */
  checkRoom(storage: ObjectStore, tenant: string, path: string, previousBytes: number, nextBytes: number): Promise<void>
  /** Records a change this instance made (positive: bytes added). */
  adjust(tenant: string, deltaBytes: number): void
}

export interface TenantQuotaOptions {
  limitBytes: number
  ttlMs?: number
  now?: () => number
}

export function tenantStoragePrefix(tenant: string): string {
  return `tenants/${tenant}/workspaces/`
}

export function createTenantQuota(options: TenantQuotaOptions): TenantQuota {
  const ttlMs = options.ttlMs ?? 10_000
  const now = options.now ?? Date.now
  const cache = new Map<string, { bytes: number; at: number }>()
  // One listing per tenant at a time: writes waiting for it then reserve against the same entry.
  const measuring = new Map<string, Promise<{ bytes: number; at: number }>>()

  async function measure(storage: ObjectStore, tenant: string): Promise<number> {
    let bytes = 0
    let cursor: string | undefined
    do {
      const page: ListResult = await storage.list(tenantStoragePrefix(tenant), cursor ? { cursor } : {})
      for (const object of page.objects) bytes += object.size
      cursor = page.cursor
    } while (cursor)
    return bytes
  }

  async function entryOf(storage: ObjectStore, tenant: string): Promise<{ bytes: number; at: number }> {
    const cached = cache.get(tenant)
    if (cached && now() - cached.at < ttlMs) return cached
    let pending = measuring.get(tenant)
    if (!pending) {
      pending = measure(storage, tenant)
        .then((bytes) => {
          const entry = { bytes, at: now() }
          cache.set(tenant, entry)
          return entry
        })
        .finally(() => measuring.delete(tenant))
      measuring.set(tenant, pending)
    }
    return pending
  }

  const quota: TenantQuota = {
    limitBytes: options.limitBytes,
    async usage(storage, tenant) {
      return (await entryOf(storage, tenant)).bytes
    },
    async assertRoom(storage, tenant, path, previousBytes, nextBytes) {
      if (nextBytes <= previousBytes) return
      const entry = await entryOf(storage, tenant)
      const after = entry.bytes - previousBytes + nextBytes
      if (after > options.limitBytes) throw overQuota(path, entry.bytes, after, nextBytes)
      entry.bytes = after
    },
    async checkRoom(storage, tenant, path, previousBytes, nextBytes) {
      if (nextBytes <= previousBytes) return
      const used = (await entryOf(storage, tenant)).bytes
      const after = used - previousBytes + nextBytes
      if (after > options.limitBytes) throw overQuota(path, used, after, nextBytes)
    },
    adjust(tenant, deltaBytes) {
      const cached = cache.get(tenant)
      if (cached) cached.bytes = Math.max(0, cached.bytes + deltaBytes)
    },
  }
  function overQuota(path: string, used: number, after: number, nextBytes: number): ToolError {
    return new ToolError(
      'size_exceeded',
      `Writing ${path} (${nextBytes} bytes) would take this tenant's storage to ${after} bytes; the quota is ${options.limitBytes} bytes.`,
      {
        hint: `This tenant stores ${used} of ${options.limitBytes} bytes. Delete files you no longer need (delete_file), or write less.`,
        details: { limit: options.limitBytes, used, size: nextBytes },
      },
    )
  }
  return quota
}

function bodySize(body: ObjectBody): number | undefined {
  if (typeof body === 'string') return new TextEncoder().encode(body).byteLength
  if (body instanceof Uint8Array) return body.byteLength
  return undefined
}

/**
 * The store a workspace writes through when a quota is set: every put under the tenant checks the quota
 * first (so the sandbox sync-back, which puts directly, is held to it too) and every put or delete
 * adjusts the cached usage. Streams of unknown length are counted after they land.
 */
export function quotaStore(storage: ObjectStore, tenant: string, quota: TenantQuota): ObjectStore {
  const prefix = tenantStoragePrefix(tenant)
  const pathOf = (key: string) => key.slice(key.indexOf('/workspaces/') + '/workspaces/'.length)
  return {
    driver: storage.driver,
    get: (key) => storage.get(key),
    getWithin: (key, maxBytes) => storage.getWithin(key, maxBytes),
    getStream: (key) => storage.getStream(key),
    head: (key) => storage.head(key),
    list: (listPrefix, options) => storage.list(listPrefix, options),
    check: () => storage.check(),
    ...(storage.presignGet ? { presignGet: storage.presignGet.bind(storage) } : {}),
    async put(key, body, options) {
      if (!key.startsWith(prefix)) return storage.put(key, body, options)
      const previous = (await storage.head(key))?.size ?? 0
      const size = bodySize(body)
      if (size !== undefined) await quota.assertRoom(storage, tenant, pathOf(key), previous, size)
      // assertRoom reserved max(0, size - previous); settle that against what was really stored.
      const reserved = size === undefined ? 0 : Math.max(0, size - previous)
      let info: ObjectInfo
      try {
        info = await storage.put(key, body, options)
      } catch (error) {
        quota.adjust(tenant, -reserved)
        throw error
      }
      quota.adjust(tenant, info.size - previous - reserved)
      return info
    },
    async create(key, body, options) {
      if (!key.startsWith(prefix)) return storage.create(key, body, options)
      const size = bodySize(body) ?? 0
      await quota.assertRoom(storage, tenant, pathOf(key), 0, size)
      const created = await storage.create(key, body, options).catch((error: unknown) => {
        quota.adjust(tenant, -size)
        throw error
      })
      if (!created) quota.adjust(tenant, -size)
      return created
    },
    async delete(key) {
      if (!key.startsWith(prefix)) return storage.delete(key)
      const previous = (await storage.head(key))?.size ?? 0
      await storage.delete(key)
      quota.adjust(tenant, -previous)
    },
    async copy(fromKey, toKey) {
      if (!toKey.startsWith(prefix)) return storage.copy(fromKey, toKey)
      const [source, previous] = await Promise.all([storage.head(fromKey), storage.head(toKey)])
      const before = previous?.size ?? 0
      if (source) await quota.assertRoom(storage, tenant, pathOf(toKey), before, source.size)
      const reserved = source ? Math.max(0, source.size - before) : 0
      let info: ObjectInfo
      try {
        info = await storage.copy(fromKey, toKey)
      } catch (error) {
        quota.adjust(tenant, -reserved)
        throw error
      }
      quota.adjust(tenant, info.size - before - reserved)
      return info
    },
  }
}
