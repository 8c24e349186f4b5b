import { ToolError } from '../core/errors'
import { readRecord, retryOnConflict, type Versioned, writeRecord } from '../storage/compare-and-swap'
import { tenantKeys, workspaceKeys } from '../storage/layout'
import {
  type DeleteOptions,
  isPreconditionFailed,
  type ListResult,
  type ObjectBody,
  type ObjectInfo,
  type ObjectStore,
} from '../storage/store'

/**
 * Per-tenant storage quota (TOOLPORT_TENANT_QUOTA_BYTES), held across every instance on one bucket.
 *
 * The tenant's usage is one record, tenants/{tenant}/usage.json, changed only by compare-and-swap: a
 * write that grows the tenant first reserves the growth on the record (If-Match on the version it read),
 * and is refused when the reservation would pass the quota; a write that fails or shrinks gives bytes
 * back the same way. Of concurrent writers on any instances each reservation lands on a version that
 * counts all earlier ones, so together they never pass the quota; what can be stored beyond it is the
 * file whose reservation another instance crashed before settling, and that error is on the safe side
 * (counted, not stored). The first write of a tenant measures the workspaces once by listing and
 * creates the record; deleting the record makes the next write measure again.
 */
export interface TenantQuota {
  readonly limitBytes: number
  /** Bytes the tenant stores now, as the usage record counts them. */
  usage(storage: ObjectStore, tenant: string): Promise<number>
  /**
   * Throws size_exceeded when replacing `previousBytes` with `nextBytes` would go over the quota;
   * otherwise reserves the difference on the usage record. A write that then fails must give it back
   * with release().
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
  /** Records a change of the tenant's stored bytes (negative: bytes given back) on the usage record. */
  adjust(storage: ObjectStore, tenant: string, deltaBytes: number): Promise<void>
}

export interface TenantQuotaOptions {
  limitBytes: number
}

interface UsageRecord {
  bytes: number
}

export function tenantStoragePrefix(tenant: string): string {
  return workspaceKeys.tenantRoot(tenant)
}

/** The bytes a tenant's workspace files hold now, listed page by page (what the quota and GET /v1/usage count). */
export async function measureTenantBytes(storage: ObjectStore, tenant: string): Promise<number> {
  let bytes = 0
  let cursor: string | undefined
  do {
    const page: ListResult = await storage.list(tenantStoragePrefix(tenant), cursor ? { cursor } : {})
    for (const object of page.objects) bytes += object.size
    cursor = page.cursor
  } while (cursor)
  return bytes
}

export function createTenantQuota(options: TenantQuotaOptions): TenantQuota {
  // The version of each tenant's record this instance saw last: a reservation first tries it with
  // If-Match (one request), and reads the record only after losing a race.
  const known = new Map<string, Versioned<UsageRecord>>()

  /** The record as stored, created by measuring when there is none (or it is unreadable). */
  async function current(storage: ObjectStore, tenant: string): Promise<Versioned<UsageRecord>> {
    const key = tenantKeys.usage(tenant)
    for (;;) {
      const stored = await readRecord<UsageRecord>(storage, key)
      if (stored && typeof stored.value?.bytes === 'number') {
        const version = { value: stored.value, etag: stored.etag }
        known.set(tenant, version)
        return version
      }
      const value = { bytes: await measureTenantBytes(storage, tenant) }
      try {
        const info = await writeRecord(storage, key, value, stored?.etag)
        const version = { value, etag: info.etag }
        known.set(tenant, version)
        return version
      } catch (error) {
        // Another instance created (or repaired) it first: read theirs.
        if (!isPreconditionFailed(error)) throw error
      }
    }
  }

  /**
   * Adds `delta` to the record by compare-and-swap; `allowed` sees the count before and may refuse by
   * throwing. Tries the version this instance saw last first.
   */
  async function change(
    storage: ObjectStore,
    tenant: string,
    delta: number,
    allowed: (used: number) => void = () => {},
  ): Promise<void> {
    const key = tenantKeys.usage(tenant)
    await retryOnConflict(
      async (lostRaces) => {
        const version = (lostRaces === 0 && known.get(tenant)) || (await current(storage, tenant))
        allowed(version.value.bytes)
        const value = { bytes: Math.max(0, version.value.bytes + delta) }
        try {
          const info = await writeRecord(storage, key, value, version.etag)
          known.set(tenant, { value, etag: info.etag })
        } catch (error) {
          if (isPreconditionFailed(error)) known.delete(tenant)
          throw error
        }
      },
      { subject: `The storage usage of tenant ${tenant}`, attempts: 64 },
    )
  }

  const quota: TenantQuota = {
    limitBytes: options.limitBytes,
    async usage(storage, tenant) {
      return (await current(storage, tenant)).value.bytes
    },
    async assertRoom(storage, tenant, path, previousBytes, nextBytes) {
      if (nextBytes <= previousBytes) return
      await change(storage, tenant, nextBytes - previousBytes, (used) => {
        const after = used - previousBytes + nextBytes
        if (after > options.limitBytes) throw overQuota(path, used, after, nextBytes)
      })
    },
    async checkRoom(storage, tenant, path, previousBytes, nextBytes) {
      if (nextBytes <= previousBytes) return
      const used = (await current(storage, tenant)).value.bytes
      const after = used - previousBytes + nextBytes
      if (after > options.limitBytes) throw overQuota(path, used, after, nextBytes)
    },
    async adjust(storage, tenant, deltaBytes) {
      if (deltaBytes !== 0) await change(storage, tenant, deltaBytes)
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
        await quota.adjust(storage, tenant, -reserved)
        throw error
      }
      await quota.adjust(storage, tenant, info.size - previous - reserved)
      return info
    },
    async create(key, body, options) {
      if (!key.startsWith(prefix)) return storage.create(key, body, options)
      const size = bodySize(body) ?? 0
      await quota.assertRoom(storage, tenant, pathOf(key), 0, size)
      const created = await storage.create(key, body, options).catch(async (error: unknown) => {
        await quota.adjust(storage, tenant, -size)
        throw error
      })
      if (!created) await quota.adjust(storage, tenant, -size)
      return created
    },
    async delete(key, options?: DeleteOptions) {
      if (!key.startsWith(prefix)) return storage.delete(key, options)
      // Conditional on the version measured (also when the caller set no condition: then a lost race
      // measures again), so the bytes given back are those of the version deleted.
      const previous = await retryOnConflict(async () => {
        const found = await storage.head(key)
        await storage.delete(key, options ?? (found ? { ifMatch: found.etag } : {}))
        return found
      })
      if (previous && (options?.ifMatch === undefined || options.ifMatch === previous.etag)) {
        await quota.adjust(storage, tenant, -previous.size)
      }
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
        await quota.adjust(storage, tenant, -reserved)
        throw error
      }
      await quota.adjust(storage, tenant, info.size - before - reserved)
      return info
    },
  }
}
