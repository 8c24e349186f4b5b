import type { ObjectStore } from '../storage/store'
import type { JobRecord } from './types'

/**
 * Jobs live in the same bucket as the files, beside the workspaces (never inside one, so file tools
 * cannot see or forge them): tenants/{tenant}/jobs/{id}.json. Any instance can answer any poll.
 */
export interface JobStore {
  save(job: JobRecord): Promise<void>
  load(tenant: string, id: string): Promise<JobRecord | undefined>
  remove(tenant: string, id: string): Promise<void>
  /** Every job of every tenant, for recovery after a restart and for expiry sweeps. */
  all(): Promise<JobRecord[]>
}

const jobIdPattern = /^[A-Za-z0-9-]{8,64}$/

export function createJobStore(storage: ObjectStore): JobStore {
  const keyOf = (tenant: string, id: string) => `tenants/${tenant}/jobs/${id}.json`
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
    async save(job) {
      await storage.put(keyOf(job.tenant, job.id), JSON.stringify(job), { contentType: 'application/json' })
    },
    async load(tenant, id) {
      if (!jobIdPattern.test(id)) return undefined
      const object = await storage.get(keyOf(tenant, id))
      if (!object) return undefined
      try {
        return JSON.parse(new TextDecoder().decode(object.body)) as JobRecord
      } catch {
        return undefined
      }
    },
    async remove(tenant, id) {
      await storage.delete(keyOf(tenant, id))
    },
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
