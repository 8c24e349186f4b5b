import { createJsonRecords, type JsonRecords } from '../storage/json-records'
import type { ObjectStore } from '../storage/store'
import type { JobRecord } from './types'

/**
 * Jobs live in the same bucket as the files, beside the workspaces (never inside one, so file tools
 * cannot see or forge them): tenants/{tenant}/jobs/{id}.json. Any instance can answer any poll.
 */
export interface JobStore extends JsonRecords<JobRecord> {
  /** Every job of every tenant, for recovery after a restart and for expiry sweeps. */
  all(): Promise<JobRecord[]>
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
  const store: JobStore = {
    ...createJsonRecords<JobRecord>(storage, (tenant, id) => `tenants/${tenant}/jobs/${id}.json`),
    async all() {
      const tenants = (await listAll('tenants/', '/')).prefixes
      const jobs: JobRecord[] = []
      for (const tenantPrefix of tenants) {
        for (const key of (await listAll(`${tenantPrefix}jobs/`)).keys) {
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
