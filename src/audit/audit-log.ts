import type { Audit, AuditAction, AuditDetails, AuditEvent, AuditOutcome } from '../core/audit'
import { sha256Hex } from '../core/digest'
import { createKeyedLock } from '../core/keyed-lock'
import { describeCause, type Logger } from '../core/logger'
import { auditKeys } from '../storage/layout'
import { listAll } from '../storage/list-all'
import { isPreconditionFailed, type ObjectStore } from '../storage/store'
import { canonicalJson } from './canonical-json'

/**
 * The audit log in the bucket: per tenant, a chain of records at audit/{tenant}/{seq}.json, each
 * carrying the SHA-256 of the record before it, so a record edited, removed or slipped in is found by
 * verify(). The key is the record's place in the chain, written create-if-absent: of two instances
 * appending at once exactly one gets a place, the other reads the record that took it and links to that
 * one, so the fleet keeps one chain without a lock object. head.json says where the chain ended (a hint
 * for appenders, moved only forward by compare-and-swap), and what verify checks the end against.
 */
export interface AuditRecord {
  seq: number
  time: string
  tenant: string
  principal: string
  action: AuditAction
  target: string | null
  outcome: AuditOutcome
  request_id: string | null
  trace_id: string | null
  details: AuditDetails
  /** The hash of the record before (64 zeros for the first). */
  prev: string
  /** SHA-256 of this record's canonical JSON without this field. */
  hash: string
}

export interface AuditFilter {
  action?: AuditAction | undefined
  outcome?: AuditOutcome | undefined
  principal?: string | undefined
  target?: string | undefined
  since?: Date | undefined
  until?: Date | undefined
}

export interface AuditPageRequest {
  /** Oldest first from after this seq; without it, newest first (from before, or from the end). */
  after?: number | undefined
  before?: number | undefined
  limit: number
  filter: AuditFilter
}

export interface AuditPage {
  records: AuditRecord[]
  /** Where the next page starts (after= for oldest first, before= for newest first); absent at the end. */
  next?: { after: number } | { before: number } | undefined
}

export type AuditProblemKind = 'missing' | 'edited' | 'unlinked' | 'unreadable'

export interface AuditProblem {
  seq: number
  /** For a run of missing records: the last seq of the run. */
  through?: number
  problem: AuditProblemKind
  detail: string
}

export interface AuditVerification {
  tenant: string
  ok: boolean
  records: number
  first_seq: number | null
  last_seq: number | null
  /** Records before first_seq removed by retention, as an audit.pruned record in the chain says. */
  pruned_through: number | null
  problems: AuditProblem[]
}

export interface AuditLog extends Audit {
  page(tenant: string, request: AuditPageRequest): Promise<AuditPage>
  verify(tenant: string): Promise<AuditVerification>
  /** Removes the tenant's records older than `before` and says so in the chain; answers how many went. */
  prune(tenant: string, before: Date): Promise<number>
}

export interface AuditLogOptions {
  storage: ObjectStore
  log: Logger
  /** Records older than this many days are removed (checked at most hourly per tenant); 0 keeps them. */
  retentionDays: number
  now?: () => Date
}

const genesis = '0'.repeat(64)
// Placing a record races the other instances at most this many times before the event is given up (and logged).
const maxPlacements = 64
const pruneEveryMs = 3_600_000
// Reads of one page stop after this many records, filters or not: the next page goes on from there.
const maxScan = 1000
const batch = 25

interface ChainEnd {
  seq: number
  hash: string
}

export function createAuditLog(options: AuditLogOptions): AuditLog {
  const { storage, log } = options
  const now = options.now ?? (() => new Date())
  const lock = createKeyedLock()
  // Where this instance last saw each chain end, and the head's version: both only hints.
  const ends = new Map<string, ChainEnd>()
  const heads = new Map<string, { seq: number; etag: string }>()
  const prunedAt = new Map<string, number>()

  async function readRecord(tenant: string, seq: number): Promise<AuditRecord | null | 'unreadable'> {
    const object = await storage.get(auditKeys.record(tenant, seq))
    if (!object) return null
    try {
      return JSON.parse(new TextDecoder().decode(object.body)) as AuditRecord
    } catch {
      return 'unreadable'
    }
  }

  async function readHead(tenant: string): Promise<(ChainEnd & { etag: string }) | undefined> {
    const object = await storage.get(auditKeys.head(tenant))
    if (!object) return undefined
    try {
      const head = JSON.parse(new TextDecoder().decode(object.body)) as ChainEnd
      return Number.isSafeInteger(head.seq) && typeof head.hash === 'string'
        ? { seq: head.seq, hash: head.hash, etag: object.etag }
        : undefined
    } catch {
      return undefined
    }
  }

  /** The chain's end: from the head (or the start), forward past records written since it moved. */
  async function findEnd(tenant: string, from?: ChainEnd): Promise<ChainEnd> {
    let end = from ?? ends.get(tenant)
    if (!end) {
      const head = await readHead(tenant)
      if (head) heads.set(tenant, { seq: head.seq, etag: head.etag })
      end = head ? { seq: head.seq, hash: head.hash } : { seq: 0, hash: genesis }
    }
    for (;;) {
      const next = await readRecord(tenant, end.seq + 1)
      if (next === null) return end
      // An unreadable record still holds its place; the next one links to whatever it was.
      end = { seq: end.seq + 1, hash: next === 'unreadable' ? '' : next.hash }
    }
  }

  /** Moves head.json forward to `end` (never back): a compare-and-swap on the version last seen. */
  async function advanceHead(tenant: string, end: ChainEnd): Promise<void> {
    const body = JSON.stringify({ seq: end.seq, hash: end.hash })
    for (let attempt = 0; attempt < 8; attempt++) {
      const known = heads.get(tenant)
      if (known && known.seq >= end.seq) return
      try {
        const info = await storage.put(auditKeys.head(tenant), body, {
          contentType: 'application/json',
          ...(known ? { ifMatch: known.etag } : { ifNoneMatch: '*' }),
        })
        heads.set(tenant, { seq: end.seq, etag: info.etag })
        return
      } catch (error) {
        if (!isPreconditionFailed(error)) throw error
        const head = await readHead(tenant)
        if (head) heads.set(tenant, { seq: head.seq, etag: head.etag })
        else heads.delete(tenant)
      }
    }
  }

  async function append(event: AuditEvent): Promise<AuditRecord> {
    const { tenant } = event
    const release = await lock.acquire(tenant)
    try {
      let end = await findEnd(tenant)
      for (let attempt = 0; attempt < maxPlacements; attempt++) {
        const body: Omit<AuditRecord, 'hash'> = {
          seq: end.seq + 1,
          time: now().toISOString(),
          tenant,
          principal: event.principal,
          action: event.action,
          target: event.target ?? null,
          outcome: event.outcome,
          request_id: event.requestId ?? null,
          trace_id: event.traceId ?? null,
          details: event.details ?? {},
          prev: end.hash,
        }
        const record: AuditRecord = { ...body, hash: await sha256Hex(canonicalJson(body)) }
        const placed = await storage.create(auditKeys.record(tenant, record.seq), JSON.stringify(record), {
          contentType: 'application/json',
        })
        if (placed) {
          const placedEnd = { seq: record.seq, hash: record.hash }
          ends.set(tenant, placedEnd)
          await advanceHead(tenant, placedEnd)
          return record
        }
        // Another instance took the place: link to its record (and any after it) instead.
        end = await findEnd(tenant, end)
      }
      throw new Error(`no place in the audit chain of ${tenant} after ${maxPlacements} tries`)
    } finally {
      release()
    }
  }

  function maybePrune(tenant: string): void {
    if (options.retentionDays <= 0 || tenant === '') return
    const last = prunedAt.get(tenant) ?? 0
    if (Date.now() - last < pruneEveryMs) return
    prunedAt.set(tenant, Date.now())
    const before = new Date(now().getTime() - options.retentionDays * 86_400_000)
    prune(tenant, before).catch((error: unknown) =>
      log.error('audit retention failed', { tenant, cause: describeCause(error) }),
    )
  }

  async function prune(tenant: string, before: Date): Promise<number> {
    let removed = 0
    let through = 0
    let cursor: string | undefined
    scan: do {
      const page = await storage.list(auditKeys.folder(tenant), cursor ? { cursor } : {})
      for (const object of page.objects) {
        const seq = seqOfKey(object.key)
        if (seq === undefined) continue
        const record = await readRecord(tenant, seq)
        if (record === null) continue
        // Stops at the first record young enough to keep (or one that cannot be read: verify's to report).
        if (record === 'unreadable' || new Date(record.time) >= before) break scan
        await storage.delete(object.key)
        removed++
        through = seq
      }
      cursor = page.cursor
    } while (cursor)
    if (removed > 0) {
      await record({
        tenant,
        principal: 'system',
        action: 'audit.pruned',
        outcome: 'success',
        details: { through, removed, before: before.toISOString() },
      })
    }
    return removed
  }

  async function record(event: AuditEvent): Promise<void> {
    try {
      const stored = await append(event)
      // The log stream gets every event as it is kept (operators ship it with the rest of the logs).
      log.info('audit', { audit: stored })
    } catch (error) {
      log.error('audit event not kept', { audit: event, cause: describeCause(error) })
      return
    }
    if (event.action !== 'audit.pruned') maybePrune(event.tenant)
  }

  async function page(tenant: string, request: AuditPageRequest): Promise<AuditPage> {
    const ascending = request.after !== undefined
    let seq = ascending ? (request.after as number) + 1 : (request.before ?? (await findEnd(tenant)).seq + 1) - 1
    const records: AuditRecord[] = []
    let scanned = 0
    while (seq >= 1 && records.length < request.limit && scanned < maxScan) {
      const seqs = Array.from({ length: batch }, (_, index) => (ascending ? seq + index : seq - index)).filter(
        (value) => value >= 1,
      )
      const found = await Promise.all(seqs.map((value) => readRecord(tenant, value)))
      let stopped = false
      for (const [index, record] of found.entries()) {
        const at = seqs[index] as number
        if (record === null) {
          // The start (pruned) or end of the chain; a hole in the middle is verify's to report.
          stopped = true
          seq = at
          break
        }
        scanned++
        seq = ascending ? at + 1 : at - 1
        if (record !== 'unreadable' && matches(record, request.filter)) records.push(record)
        if (records.length >= request.limit || scanned >= maxScan) break
      }
      if (stopped) return { records }
    }
    if (seq < 1) return { records }
    return { records, next: ascending ? { after: seq - 1 } : { before: seq + 1 } }
  }

  async function verify(tenant: string): Promise<AuditVerification> {
    const seqs = (await listAll(storage, auditKeys.folder(tenant)))
      .map((object) => seqOfKey(object.key))
      .filter((seq): seq is number => seq !== undefined)
      .sort((a, b) => a - b)
    const problems: AuditProblem[] = []
    const records = new Map<number, AuditRecord>()
    for (let index = 0; index < seqs.length; index += batch) {
      const slice = seqs.slice(index, index + batch)
      const found = await Promise.all(slice.map((seq) => readRecord(tenant, seq)))
      for (const [at, record] of found.entries()) {
        const seq = slice[at] as number
        if (record === null) continue
        if (record === 'unreadable') {
          problems.push({ seq, problem: 'unreadable', detail: 'The record is not JSON.' })
          continue
        }
        records.set(seq, record)
      }
    }
    let prunedThrough = 0
    for (const record of records.values()) {
      const through = record.action === 'audit.pruned' ? record.details.through : undefined
      if (typeof through === 'number' && through > prunedThrough) prunedThrough = through
    }
    const first = seqs[0]
    const last = seqs.at(-1)
    if (first !== undefined && first > prunedThrough + 1) {
      problems.push({
        seq: prunedThrough + 1,
        through: first - 1,
        problem: 'missing',
        detail: 'Records at the start of the chain are gone, and no audit.pruned record says retention removed them.',
      })
    }
    for (const [index, seq] of seqs.entries()) {
      const record = records.get(seq)
      if (!record) continue
      const { hash, ...body } = record
      if (record.seq !== seq || (await sha256Hex(canonicalJson(body))) !== hash) {
        problems.push({ seq, problem: 'edited', detail: 'The record does not hash to the hash it carries.' })
        continue
      }
      const previous = index > 0 ? (seqs[index - 1] as number) : undefined
      if (previous !== undefined && previous < seq - 1) {
        problems.push({
          seq: previous + 1,
          through: seq - 1,
          problem: 'missing',
          detail: 'Records in the middle of the chain are gone.',
        })
      } else if (previous !== undefined) {
        const before = records.get(previous)
        if (before && before.hash !== record.prev) {
          problems.push({
            seq,
            problem: 'unlinked',
            detail: 'The record does not carry the hash of the one before it.',
          })
        }
      } else if (seq === 1 && record.prev !== genesis) {
        problems.push({ seq, problem: 'unlinked', detail: 'The first record does not start the chain.' })
      }
    }
    const head = await readHead(tenant)
    if (head && (last === undefined || head.seq > last)) {
      problems.push({
        seq: (last ?? 0) + 1,
        through: head.seq,
        problem: 'missing',
        detail: 'Records at the end of the chain are gone (head.json says it reached further).',
      })
    } else if (head && records.get(head.seq) && records.get(head.seq)?.hash !== head.hash) {
      problems.push({ seq: head.seq, problem: 'edited', detail: 'The record is not the one head.json recorded.' })
    }
    problems.sort((a, b) => a.seq - b.seq)
    return {
      tenant,
      ok: problems.length === 0,
      records: records.size,
      first_seq: first ?? null,
      last_seq: last ?? null,
      pruned_through: prunedThrough > 0 ? prunedThrough : null,
      problems,
    }
  }

  return { enabled: true, record, page, verify, prune }
}

function seqOfKey(key: string): number | undefined {
  const match = /\/(\d{12})\.json$/.exec(key)
  return match ? Number(match[1]) : undefined
}

function matches(record: AuditRecord, filter: AuditFilter): boolean {
  if (filter.action && record.action !== filter.action) return false
  if (filter.outcome && record.outcome !== filter.outcome) return false
  if (filter.principal && record.principal !== filter.principal) return false
  if (filter.target && record.target !== filter.target) return false
  const time = new Date(record.time)
  if (filter.since && time < filter.since) return false
  if (filter.until && time >= filter.until) return false
  return true
}
