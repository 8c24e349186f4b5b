import type { StoredPrincipal } from '../auth/principal'
import { readRecord, writeRecord } from '../storage/compare-and-swap'
import { createJsonRecords, isRecordId, type JsonRecords } from '../storage/json-records'
import { approvalKeys } from '../storage/layout'
import { isPreconditionFailed, type ObjectStore } from '../storage/store'

/** A call waiting for POST /v1/approvals/{id}; stored as approvals/{tenant}/{id}.json (lifecycle-expired in S3). */
export interface ApprovalRecord {
  id: string
  tenant: string
  principal: StoredPrincipal
  tool: string
  /** The tool's effect when the call was asked for (what the policy gated). */
  effect?: string
  workspace: string
  input: unknown
  title: string
  /** What the call would do (its dry run, cut to the response limit), for the approver's card. */
  preview?: unknown
  truncated?: true
  hint?: string
  created_at: string
  expires_at: string
  /** Set (by compare-and-swap) by the one decision that took the call; such a record is no longer pending. */
  taken_at?: string
  /** The caller's W3C trace context: the approved call's span joins the trace of the call that asked. */
  trace?: { traceparent?: string; tracestate?: string }
}

export interface ApprovalPage {
  records: ApprovalRecord[]
  /** Present when more records follow: the id of the last record of this page. */
  cursor?: string
  /** Pending calls this listing found expired and removed (each is removed, and so reported, once). */
  expired: ApprovalRecord[]
}

export interface ApprovalStore extends JsonRecords<ApprovalRecord> {
  /**
   * Loads and removes a pending call in one step: of concurrent takers (a double click, a retrying client,
   * two instances) exactly one gets the record, so an approved call runs at most once.
   */
  take(tenant: string, id: string): Promise<ApprovalRecord | undefined>
  /** The tenant's pending, unexpired calls, newest first, `limit` at a time after the record `cursor`. */
  list(tenant: string, options: { limit: number; cursor?: string | undefined; now: Date }): Promise<ApprovalPage>
}

// Newest first in key order: an id starts with the milliseconds left until a far date, zero-padded.
const farFuture = 9_999_999_999_999

/** A new approval id: time-ordered (newest sorts first) and unguessable. */
export function newApprovalId(now: Date): string {
  return `${String(farFuture - now.getTime()).padStart(13, '0')}-${crypto.randomUUID()}`
}

// Enough for any real queue of pending calls (they expire); a listing never walks further.
const maxListed = 10_000

export function createApprovalStore(storage: ObjectStore): ApprovalStore {
  const records = createJsonRecords<ApprovalRecord>(storage, approvalKeys.record)
  async function idsOf(tenant: string): Promise<string[]> {
    const prefix = approvalKeys.folder(tenant)
    const ids: string[] = []
    let cursor: string | undefined
    do {
      const page = await storage.list(prefix, cursor ? { cursor } : {})
      for (const object of page.objects) {
        const name = object.key.slice(prefix.length)
        if (name.endsWith('.json') && !name.includes('/')) ids.push(name.slice(0, -'.json'.length))
      }
      cursor = page.cursor
    } while (cursor && ids.length < maxListed)
    return ids.sort()
  }
  const store: ApprovalStore = {
    ...records,
    async take(tenant, id) {
      if (!isRecordId(id)) return undefined
      // Exactly once without a lock: the taker marks the version it read as taken with If-Match. Of
      // concurrent takers holding that version one write lands; the rest, and anyone reading later (the
      // marked record, or none once it is deleted), get nothing.
      const key = approvalKeys.record(tenant, id)
      const current = await readRecord<ApprovalRecord>(storage, key)
      if (!current?.value || current.value.taken_at) return undefined
      const taken = { ...current.value, taken_at: new Date().toISOString() }
      try {
        await writeRecord(storage, key, taken, current.etag)
      } catch (error) {
        if (isPreconditionFailed(error)) return undefined
        throw error
      }
      await storage.delete(key).catch(() => {})
      return current.value
    },
    async list(tenant, { limit, cursor, now }) {
      const ids = (await idsOf(tenant)).filter((id) => cursor === undefined || id > cursor)
      const page: ApprovalRecord[] = []
      const expired: ApprovalRecord[] = []
      let last: string | undefined
      for (const id of ids) {
        if (page.length === limit) return { records: page, expired, ...(last ? { cursor: last } : {}) }
        last = id
        const record = await records.load(tenant, id)
        if (!record || record.taken_at) continue
        if (Date.parse(record.expires_at) > now.getTime()) page.push(record)
        else {
          // Taken like a decision, exactly once across the fleet, so its expiry is told once.
          const gone = await store.take(tenant, id)
          if (gone) expired.push(gone)
        }
      }
      return { records: page, expired }
    },
  }
  return store
}
