import { ToolError } from '../../core/errors'
import { readRecord, retryOnConflict, writeRecord } from '../../storage/compare-and-swap'
import { sourceKeys } from '../../storage/layout'
import type { ObjectStore } from '../../storage/store'

/**
 * A tenant's source budget (TOOLPORT_TENANT_SOURCES_MAX sources, TOOLPORT_TENANT_SOURCE_TOOLS_MAX
 * tools), held under concurrency: a PUT reserves its source's tools in one record per tenant by
 * compare-and-swap before it stores the manifest, so PUTs racing on one instance or several cannot
 * each count only what was stored before them. A reservation whose source was never stored (its PUT
 * failed, its instance died) stops counting after `pendingMs`.
 */
export interface SourceBudget {
  /** Reserves `tools` for the source `id` (replacing its earlier reservation); throws 413 past a limit. */
  reserve(tenant: string, id: string, tools: number, stored: ReadonlyMap<string, number>): Promise<Release>
  /** Forgets the source (DELETE). */
  release(tenant: string, id: string): Promise<void>
}

/** Undoes a reservation whose manifest could not be stored: the source's earlier one comes back. */
export type Release = () => Promise<void>

interface Reservation {
  tools: number
  /** When it was made (ISO 8601): one whose source is not stored is counted only while it is recent. */
  at: string
}

interface BudgetRecord {
  sources: Record<string, Reservation>
}

export interface BudgetLimits {
  maxSources: number
  maxTools: number
  /** How long a reservation counts without its source stored: a PUT in flight. */
  pendingMs?: number
  now?: () => number
}

export function createSourceBudget(storage: ObjectStore, limits: BudgetLimits): SourceBudget {
  const now = limits.now ?? Date.now
  const pendingMs = limits.pendingMs ?? 120_000

  /** Changes the tenant's record by compare-and-swap; `change` answers the new record, or throws. */
  async function update(tenant: string, change: (record: BudgetRecord) => BudgetRecord): Promise<void> {
    const key = sourceKeys.budget(tenant)
    await retryOnConflict(
      async () => {
        const read = await readRecord<BudgetRecord>(storage, key)
        const current: BudgetRecord = read?.value?.sources ? read.value : { sources: {} }
        await writeRecord(storage, key, change(current), read?.etag)
      },
      { subject: `The source budget of ${tenant}` },
    )
  }

  return {
    async reserve(tenant, id, tools, stored) {
      let earlier: Reservation | undefined
      await update(tenant, (record) => {
        earlier = record.sources[id]
        // What counts: every stored source (its reservation, else the tools it loaded with) and every
        // recent reservation of a source not stored yet; stale ones are dropped here.
        const kept: Record<string, Reservation> = {}
        let sources = 0
        let total = tools
        const counted = new Set<string>()
        for (const [other, reservation] of Object.entries(record.sources)) {
          if (other === id) continue
          const recent = now() - Date.parse(reservation.at) < pendingMs
          if (!stored.has(other) && !recent) continue
          kept[other] = reservation
          counted.add(other)
          sources++
          total += reservation.tools
        }
        for (const [other, loaded] of stored) {
          if (other === id || counted.has(other)) continue
          sources++
          total += loaded
        }
        if (sources + 1 > limits.maxSources) {
          throw new ToolError('size_exceeded', `This tenant has ${sources} sources, the most allowed.`, {
            hint: 'Remove a source (DELETE /v1/sources/{id}) before adding another.',
          })
        }
        if (total > limits.maxTools) {
          throw new ToolError(
            'size_exceeded',
            `The source ${id} was not registered: this tenant's sources would hold ${total} tools, and ${limits.maxTools} is the most allowed.`,
            {
              hint: "Register fewer tools (a smaller manifest, or `tools` to pick an MCP server's), or remove a source first.",
              details: { field: 'tools' },
            },
          )
        }
        kept[id] = { tools, at: new Date(now()).toISOString() }
        return { sources: kept }
      })
      return () =>
        update(tenant, (record) => {
          const { [id]: _, ...rest } = record.sources
          return { sources: earlier ? { ...rest, [id]: earlier } : rest }
        })
    },
    async release(tenant, id) {
      await update(tenant, (record) => {
        const { [id]: _, ...rest } = record.sources
        return { sources: rest }
      })
    },
  }
}
