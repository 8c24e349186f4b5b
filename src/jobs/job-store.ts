import { readRecord, retryOnConflict, type Versioned, writeRecord } from '../storage/compare-and-swap'
import { createJsonRecords, isRecordId, type JsonRecords } from '../storage/json-records'
import { jobKeys, tenantKeys } from '../storage/layout'
import { isPreconditionFailed, type ObjectStore } from '../storage/store'
import type { JobRecord } from './types'

// Versions this instance wrote last, by job: enough for every job one instance runs at once.
const maxRemembered = 4096

/**
 * Jobs live in the same bucket as the files, beside the workspaces (never inside one, so file tools
 * cannot see or forge them): tenants/{tenant}/jobs/{id}.json. Any instance can answer any poll.
 */
export interface JobStore extends JsonRecords<JobRecord> {
  /** Every job of every tenant, for recovery after a restart and for expiry sweeps. */
  all(): Promise<JobRecord[]>
  /**
   * Reads, changes and writes one job with no other update of it in between, on any instance (a cancel
   * landing while the result is stored, a heartbeat racing a cancel): a compare-and-swap on the job's
   * etag, so a writer that was paused or partitioned fails its write instead of overwriting a newer one.
   * `change` gets the stored job (undefined when there is none) and returns the new one, or undefined to
   * leave it as it is; it may run more than once. Resolves to the job as stored afterwards: the very
   * object `change` returned when it wrote.
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
  const records = createJsonRecords<JobRecord>(storage, jobKeys.record)
  // The version of each job this instance wrote last: an update first tries it with If-Match, so a
  // heartbeat of the job this instance runs is one conditional put, and a read only follows a lost race.
  const lastWritten = new Map<string, Versioned<JobRecord>>()
  const remember = (key: string, version: Versioned<JobRecord>) => {
    lastWritten.delete(key)
    if (version.value.status === 'running' || version.value.status === 'queued') lastWritten.set(key, version)
    if (lastWritten.size > maxRemembered) lastWritten.delete(lastWritten.keys().next().value as string)
  }
  const store: JobStore = {
    ...records,
    async save(record) {
      const key = jobKeys.record(record.tenant, record.id)
      lastWritten.delete(key)
      const info = await storage.put(key, JSON.stringify(record), { contentType: 'application/json' })
      remember(key, { value: structuredClone(record), etag: info.etag })
    },
    async update(tenant, id, change) {
      if (!isRecordId(id)) return undefined
      const key = jobKeys.record(tenant, id)
      const remembered = lastWritten.get(key)
      if (remembered) {
        const next = change(structuredClone(remembered.value))
        if (next) {
          try {
            const info = await writeRecord(storage, key, next, remembered.etag)
            remember(key, { value: next, etag: info.etag })
            return next
          } catch (error) {
            if (!isPreconditionFailed(error)) throw error
          }
        }
        // Changed by someone else (or `change` declined on what this instance last wrote): read it.
        lastWritten.delete(key)
      }
      return retryOnConflict(
        async () => {
          const current = await readRecord<JobRecord>(storage, key)
          const next = change(current?.value ?? undefined)
          if (!next) return current?.value ?? undefined
          const info = await writeRecord(storage, key, next, current?.etag)
          remember(key, { value: next, etag: info.etag })
          return next
        },
        { subject: `Job ${id}` },
      )
    },
    async all() {
      const tenants = (await listAll(tenantKeys.all, '/')).prefixes
      const jobs: JobRecord[] = []
      for (const tenantPrefix of tenants) {
        for (const key of (await listAll(tenantPrefix + jobKeys.folder)).keys.filter((name) =>
          name.endsWith('.json'),
        )) {
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
