import type { ObjectStore } from './store'

/** Records kept as one JSON object each, by tenant and id (pending approvals, jobs). */
export interface JsonRecords<T extends { tenant: string; id: string }> {
  save(record: T): Promise<void>
  /** undefined for an id that is malformed, missing or not readable JSON. */
  load(tenant: string, id: string): Promise<T | undefined>
  remove(tenant: string, id: string): Promise<void>
}

// Ids come from URLs and events: anything else never reaches storage as part of a key.
export const recordIdPattern = /^[A-Za-z0-9-]{8,64}$/

export function isRecordId(id: string): boolean {
  return recordIdPattern.test(id)
}

export function createJsonRecords<T extends { tenant: string; id: string }>(
  storage: ObjectStore,
  keyOf: (tenant: string, id: string) => string,
): JsonRecords<T> {
  return {
    async save(record) {
      await storage.put(keyOf(record.tenant, record.id), JSON.stringify(record), { contentType: 'application/json' })
    },
    async load(tenant, id) {
      if (!isRecordId(id)) return undefined
      const object = await storage.get(keyOf(tenant, id))
      if (!object) return undefined
      try {
        return JSON.parse(new TextDecoder().decode(object.body)) as T
      } catch {
        return undefined
      }
    },
    async remove(tenant, id) {
      await storage.delete(keyOf(tenant, id))
    },
  }
}
