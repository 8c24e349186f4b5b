import type { StoredPrincipal } from '../auth/principal'
import { createJsonRecords, isRecordId, type JsonRecords } from '../storage/json-records'
import { withObjectLock } from '../storage/lock'
import type { ObjectStore } from '../storage/store'

/** A call waiting for POST /v1/approvals/{id}; stored as approvals/{tenant}/{id}.json (lifecycle-expired in S3). */
export interface ApprovalRecord {
  id: string
  tenant: string
  principal: StoredPrincipal
  tool: string
  workspace: string
  input: unknown
  title: string
  created_at: string
  expires_at: string
}

export interface ApprovalStore extends JsonRecords<ApprovalRecord> {
  /**
   * Loads and removes a pending call in one step: of concurrent takers (a double click, a retrying client,
   * two instances) exactly one gets the record, so an approved call runs at most once.
   */
  take(tenant: string, id: string): Promise<ApprovalRecord | undefined>
}

export function createApprovalStore(storage: ObjectStore): ApprovalStore {
  const records = createJsonRecords<ApprovalRecord>(storage, (tenant, id) => `approvals/${tenant}/${id}.json`)
  return {
    ...records,
    async take(tenant, id) {
      if (!isRecordId(id)) return undefined
      return withObjectLock(storage, `approvals/${tenant}/${id}.lock`, async () => {
        const record = await records.load(tenant, id)
        if (record) await records.remove(tenant, id)
        return record
      })
    },
  }
}
