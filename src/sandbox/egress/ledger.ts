import type { EgressLimits } from './settings'

/**
 * What one call's connections did, and the call's limits: every connection is admitted (or refused)
 * here and every byte is counted here, so the limits hold across all connections of the call. Each
 * refusal and cut also goes to the command's stderr as one line a model can act on, once per host
 * and reason.
 */
export type EgressLimitName = 'connections' | 'bytes_in' | 'bytes_out' | 'connection_time'

export interface EgressHostRecord {
  /** host:port as the command asked for it (canonical form). */
  host: string
  allowed: number
  refused: number
  /** Allowed, but the connection to the host failed (refused, unreachable, timed out). */
  failed: number
  bytes_in: number
  bytes_out: number
  /** Why connections were refused or failed (the first reason). */
  reason?: string
}

export interface EgressReport {
  allowed: number
  refused: number
  failed: number
  bytesIn: number
  bytesOut: number
  hosts: EgressHostRecord[]
  limitsReached: EgressLimitName[]
}

export interface EgressLedger {
  /**
   * Counts one more connection to host (which passed the policy), or says why it may not open: the
   * connection limit, or a byte limit already reached. Synchronous, so concurrent admissions cannot
   * both take the last slot.
   */
  admit(host: string): string | undefined
  refused(host: string, reason: string): void
  failed(host: string, reason: string): void
  /** How many of `count` received bytes may still pass; fewer than count means the connection is cut. */
  takeIn(host: string, count: number): number
  takeOut(host: string, count: number): number
  /** A connection open past the time limit is cut. */
  timedOut(host: string): void
  report(): EgressReport
}

// Lines of refusals a command's stderr gets at most; the result lists every host anyway.
const maxNotes = 20

export function createEgressLedger(limits: EgressLimits, note: (line: string) => void): EgressLedger {
  const hosts = new Map<string, EgressHostRecord>()
  const reached = new Set<EgressLimitName>()
  const noted = new Set<string>()
  let allowedCount = 0
  let bytesIn = 0
  let bytesOut = 0

  const record = (host: string): EgressHostRecord => {
    let entry = hosts.get(host)
    if (!entry) {
      entry = { host, allowed: 0, refused: 0, failed: 0, bytes_in: 0, bytes_out: 0 }
      hosts.set(host, entry)
    }
    return entry
  }
  const tell = (host: string, what: string, reason: string) => {
    const key = `${host}\n${what}\n${reason}`
    if (noted.has(key)) return
    noted.add(key)
    if (noted.size <= maxNotes) note(`toolport: egress to ${host} ${what}: ${reason}\n`)
    else if (noted.size === maxNotes + 1) note('toolport: further egress notes left out; the result lists every host\n')
  }
  const limitReason = (name: EgressLimitName): string =>
    ({
      connections: `this call's limit of ${limits.connections} connections is reached`,
      bytes_in: `this call's limit of ${limits.bytesIn} bytes received is reached`,
      bytes_out: `this call's limit of ${limits.bytesOut} bytes sent is reached`,
      connection_time: `a connection may stay open at most ${limits.connectionSeconds} s`,
    })[name]
  const take = (host: string, count: number, direction: 'bytes_in' | 'bytes_out'): number => {
    const used = direction === 'bytes_in' ? bytesIn : bytesOut
    const limit = direction === 'bytes_in' ? limits.bytesIn : limits.bytesOut
    const granted = Math.max(0, Math.min(count, limit - used))
    if (direction === 'bytes_in') bytesIn += granted
    else bytesOut += granted
    record(host)[direction] += granted
    if (granted < count) {
      reached.add(direction)
      tell(host, 'cut', limitReason(direction))
    }
    return granted
  }

  return {
    admit(host) {
      if (bytesIn >= limits.bytesIn) return limitReason('bytes_in')
      if (bytesOut >= limits.bytesOut) return limitReason('bytes_out')
      if (allowedCount >= limits.connections) {
        reached.add('connections')
        return limitReason('connections')
      }
      allowedCount++
      record(host).allowed++
      return undefined
    },
    refused(host, reason) {
      const entry = record(host)
      entry.refused++
      entry.reason ??= reason
      tell(host, 'refused', reason)
    },
    failed(host, reason) {
      const entry = record(host)
      entry.failed++
      entry.reason ??= reason
      tell(host, 'failed', reason)
    },
    takeIn: (host, count) => take(host, count, 'bytes_in'),
    takeOut: (host, count) => take(host, count, 'bytes_out'),
    timedOut(host) {
      reached.add('connection_time')
      tell(host, 'cut', limitReason('connection_time'))
    },
    report() {
      const list = [...hosts.values()]
      return {
        allowed: list.reduce((sum, entry) => sum + entry.allowed, 0),
        refused: list.reduce((sum, entry) => sum + entry.refused, 0),
        failed: list.reduce((sum, entry) => sum + entry.failed, 0),
        bytesIn,
        bytesOut,
        hosts: list.sort((left, right) => (left.host < right.host ? -1 : left.host > right.host ? 1 : 0)),
        limitsReached: [...reached],
      }
    },
  }
}
