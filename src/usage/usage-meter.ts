import { describeCause, type Logger } from '../core/logger'
import type { UsageFacts, UsageMeter } from '../core/usage'
import { usageKeys } from '../storage/layout'
import { listAll } from '../storage/list-all'
import type { ObjectStore } from '../storage/store'

/**
 * Usage per tenant and day (UTC), across the fleet without two writers on one object: each instance
 * counts in memory and writes its own running totals to usage/{tenant}/{day}/{instance}.json every few
 * seconds (and when asked: at shutdown, after a Lambda invocation). Reading a day lists its objects and
 * adds them up, so every instance's calls count, wherever they ran, and a restarted instance (a new id)
 * never overwrites what the one before it wrote.
 */
export interface UsageDay {
  day: string
  /** Calls by tool, then by outcome (`ok` or the error code). */
  calls: Record<string, Record<string, number>>
  tool_seconds: number
  sandbox_cpu_seconds: number
  /** The largest peak memory of one sandbox run that day. */
  sandbox_peak_memory_bytes: number
  browser_session_seconds: number
  egress_bytes_out: number
  egress_bytes_in: number
  fetch_bytes_out: number
  fetch_bytes_in: number
}

/** What this instance counted for a tenant since it started, for /metrics. */
export interface TenantUsageTotals extends Omit<UsageDay, 'day'> {
  tenant: string
}

export interface UsageLedger extends UsageMeter {
  /** Writes what changed since the last write. */
  flush(): Promise<void>
  /** The tenant's days, oldest first, summed over every instance's objects (this one's flushed first). */
  read(tenant: string, days: readonly string[]): Promise<UsageDay[]>
  totals(): TenantUsageTotals[]
  /** Stops the timer and writes what is left. */
  close(): Promise<void>
}

export interface UsageLedgerOptions {
  storage: ObjectStore
  log: Logger
  flushMs: number
  /** This instance's name in the keys: unique per process (a restart is a new instance). */
  instance?: string
  now?: () => Date
}

const sums = [
  'tool_seconds',
  'sandbox_cpu_seconds',
  'browser_session_seconds',
  'egress_bytes_out',
  'egress_bytes_in',
  'fetch_bytes_out',
  'fetch_bytes_in',
] as const

export function emptyDay(day: string): UsageDay {
  return {
    day,
    calls: {},
    tool_seconds: 0,
    sandbox_cpu_seconds: 0,
    sandbox_peak_memory_bytes: 0,
    browser_session_seconds: 0,
    egress_bytes_out: 0,
    egress_bytes_in: 0,
    fetch_bytes_out: 0,
    fetch_bytes_in: 0,
  }
}

/** Adds `from` into `into` (counts and sums added, the peak the larger). */
export function addDay(into: Omit<UsageDay, 'day'>, from: Partial<Omit<UsageDay, 'day'>>): void {
  for (const [tool, outcomes] of Object.entries(from.calls ?? {})) {
    const own = callsOf(into, tool)
    for (const [outcome, count] of Object.entries(outcomes)) own[outcome] = (own[outcome] ?? 0) + count
  }
  for (const name of sums) into[name] += Number(from[name] ?? 0) || 0
  into.sandbox_peak_memory_bytes = Math.max(into.sandbox_peak_memory_bytes, Number(from.sandbox_peak_memory_bytes) || 0)
}

function callsOf(into: Pick<UsageDay, 'calls'>, tool: string): Record<string, number> {
  const own = into.calls[tool] ?? {}
  into.calls[tool] = own
  return own
}

const factFields: Record<keyof UsageFacts, (typeof sums)[number] | 'sandbox_peak_memory_bytes'> = {
  sandboxCpuSeconds: 'sandbox_cpu_seconds',
  sandboxPeakMemoryBytes: 'sandbox_peak_memory_bytes',
  browserSessionSeconds: 'browser_session_seconds',
  egressBytesOut: 'egress_bytes_out',
  egressBytesIn: 'egress_bytes_in',
  fetchBytesOut: 'fetch_bytes_out',
  fetchBytesIn: 'fetch_bytes_in',
}

export function createUsageLedger(options: UsageLedgerOptions): UsageLedger {
  const { storage, log } = options
  const now = options.now ?? (() => new Date())
  const instance = options.instance ?? `${Date.now().toString(36)}-${crypto.randomUUID().slice(0, 8)}`
  // This instance's running totals per tenant and day; the days not yet written.
  const days = new Map<string, { tenant: string; usage: UsageDay }>()
  const dirty = new Set<string>()
  const totals = new Map<string, TenantUsageTotals>()
  let timer: ReturnType<typeof setTimeout> | undefined
  let writing: Promise<void> = Promise.resolve()
  let closed = false

  // Every call counts here: the day's name and each tenant's entries of it are kept until the day ends,
  // so a call costs a clock read and a map lookup, not a date formatted and a key built.
  let today = ''
  let todayEnds = 0
  let current = new Map<string, { key: string; day: UsageDay; total: TenantUsageTotals }>()

  function entry(tenant: string): { day: UsageDay; total: TenantUsageTotals } {
    const time = now().getTime()
    if (time >= todayEnds || time < todayEnds - 86_400_000) {
      today = new Date(time).toISOString().slice(0, 10)
      todayEnds = Date.parse(`${today}T00:00:00Z`) + 86_400_000
      current = new Map()
    }
    let found = current.get(tenant)
    if (!found) {
      const key = `${tenant}\n${today}`
      let held = days.get(key)
      if (!held) {
        held = { tenant, usage: emptyDay(today) }
        days.set(key, held)
      }
      let total = totals.get(tenant)
      if (!total) {
        const { day: _, ...empty } = emptyDay('')
        total = { tenant, ...empty }
        totals.set(tenant, total)
      }
      found = { key, day: held.usage, total }
      current.set(tenant, found)
    }
    dirty.add(found.key)
    schedule()
    return found
  }

  function schedule(): void {
    if (timer || closed) return
    timer = setTimeout(() => {
      timer = undefined
      void flush()
    }, options.flushMs)
    // A pending write never keeps a process alive; close() writes what is left.
    if (typeof timer === 'object' && 'unref' in timer) timer.unref()
  }

  async function writeDirty(): Promise<void> {
    const keys = [...dirty]
    dirty.clear()
    const today = now().toISOString().slice(0, 10)
    await Promise.all(
      keys.map(async (key) => {
        const held = days.get(key)
        if (!held) return
        try {
          await storage.put(usageKeys.instance(held.tenant, held.usage.day, instance), JSON.stringify(held.usage), {
            contentType: 'application/json',
            record: true,
          })
          // A past day, once written, is never counted into again.
          if (held.usage.day < today && !dirty.has(key)) days.delete(key)
        } catch (error) {
          dirty.add(key)
          log.warn('usage not written; retried at the next flush', { tenant: held.tenant, cause: describeCause(error) })
        }
      }),
    )
  }

  function flush(): Promise<void> {
    // One write at a time, in order: a later flush never lands before an earlier one.
    writing = writing.then(writeDirty, writeDirty)
    return writing
  }

  return {
    enabled: true,
    call(tenant, tool, outcome, seconds) {
      const { day, total } = entry(tenant)
      for (const into of [day, total]) {
        const own = callsOf(into, tool)
        own[outcome] = (own[outcome] ?? 0) + 1
        into.tool_seconds += seconds
      }
    },
    add(tenant, facts) {
      const { day, total } = entry(tenant)
      for (const [name, value] of Object.entries(facts) as [keyof UsageFacts, number | undefined][]) {
        const field = factFields[name]
        if (field === undefined || typeof value !== 'number' || !Number.isFinite(value) || value < 0) continue
        for (const into of [day, total]) {
          if (field === 'sandbox_peak_memory_bytes') into[field] = Math.max(into[field], value)
          else into[field] += value
        }
      }
    },
    flush,
    async read(tenant, wanted) {
      await flush()
      return Promise.all(
        wanted.map(async (day) => {
          const summed = emptyDay(day)
          const listed = await listAll(storage, usageKeys.day(tenant, day))
          const objects = await Promise.all(listed.map((object) => storage.get(object.key)))
          for (const object of objects) {
            if (!object) continue
            try {
              addDay(summed, JSON.parse(new TextDecoder().decode(object.body)) as Partial<UsageDay>)
            } catch {
              log.warn('a usage object is not JSON; left out of the sum', { tenant, day })
            }
          }
          return summed
        }),
      )
    },
    totals: () => [...totals.values()].map((total) => structuredClone(total)),
    async close() {
      closed = true
      if (timer) clearTimeout(timer)
      timer = undefined
      await flush()
    },
  }
}
