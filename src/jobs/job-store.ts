import { createJsonRecords, isRecordId, type JsonRecords } from '../storage/json-records'
import { withObjectLock } from '../storage/lock'
import type { ObjectStore } from '../storage/store'
import type { JobRecord } from './types'

/**
 * Jobs live in the same bucket as the files, beside the workspaces (never inside one, so file tools
 * cannot see or forge them): tenants/{tenant}/jobs/{id}.json. Any instance can answer any poll.
 */
export interface JobStore extends JsonRecords<JobRecord> {
  /** Every job of every tenant, for recovery after a restart and for expiry sweeps. */
  all(): Promise<JobRecord[]>
  /**
   * Reads, changes and writes one job with no other update of it in between, on any instance (a cancel
   * landing while the result is stored, a heartbeat racing a cancel). `change` gets the stored job
   * (undefined when there is none) and returns the new one, or undefined to leave it as it is. Resolves
   * to the job as stored afterwards: the very object `change` returned when it wrote.
   */
  update(
    tenant: string,
    id: string,
    change: (job: JobRecord | undefined) => JobRecord | undefined,
  ): Promise<JobRecord | undefined>
}

export function createJobStore(storage: ObjectStore): JobStore {
  async function listAll(prefix: string, delimiter?: '/'): Promise<{ keys: string[]; prefixes: string[] }> {
    const keys: string[] = []
    const prefixes: string[] = []
    let cursor: string | undefined
    do {
      const page = await storage.list(prefix, { ...(delimiter ? { delimiter } : {}), ...(cursor ? { cursor } : {}) })
      keys.push(...page.objects.map((object) => object.key))
      prefixes.push(...page.prefixes)
      cursor = page.cursor
    } while (cursor)
    return { keys, prefixes }
  }
  const records = createJsonRecords<JobRecord>(storage, (tenant, id) => `tenants/${tenant}/jobs/${id}.json`)
  const store: JobStore = {
    ...records,
    async update(tenant, id, change) {
      if (!isRecordId(id)) return undefined
      return withObjectLock(storage, `tenants/${tenant}/jobs/${id}.lock`, async () => {
        const current = await records.load(tenant, id)
        const next = change(current)
        if (!next) return current
        await records.save(next)
        return next
      })
    },
    async all() {
      const tenants = (await listAll('tenants/', '/')).prefixes
      const jobs: JobRecord[] = []
      for (const tenantPrefix of tenants) {
        for (const key of (await listAll(`${tenantPrefix}jobs/`)).keys.filter((name) => name.endsWith('.json'))) {
          const [, tenant = '', , file = ''] = key.split('/')
          const job = await store.load(tenant, file.replace(/\.json$/, ''))
          if (job) jobs.push(job)
        }
      }
      return jobs
    },
  }
  return store
}
