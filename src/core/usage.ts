/**
 * Usage per tenant as the rest of toolport sees it: what a call used, told once where it is measured
 * (the caller times every call; the shell tells its sandbox's CPU and memory and its egress bytes; the
 * fetch tools their bytes; browser sessions their length). usage/usage-meter.ts sums it per tenant and
 * day and keeps it in the bucket, where every instance's counts add up.
 */
export interface UsageFacts {
  sandboxCpuSeconds?: number
  /** The largest peak of one sandbox run (a maximum, not a sum). */
  sandboxPeakMemoryBytes?: number
  browserSessionSeconds?: number
  /** Bytes a sandbox's egress proxy passed, out and in. */
  egressBytesOut?: number
  egressBytesIn?: number
  /** Bytes an outbound fetch (http_fetch, web_fetch) sent and received. */
  fetchBytesOut?: number
  fetchBytesIn?: number
}

export interface UsageMeter {
  readonly enabled: boolean
  /** One finished call: its tool, outcome (`ok` or the error code) and seconds. */
  call(tenant: string, tool: string, outcome: string, seconds: number): void
  add(tenant: string, facts: UsageFacts): void
}

export const noUsage: UsageMeter = { enabled: false, call() {}, add() {} }

/**
 * What a tool tells the caller of its call, besides its output: what it used, and what it refused on
 * the way (a sandbox's connections the egress policy refused), for the usage and the audit log.
 */
export interface CallAccount {
  used(facts: UsageFacts): void
  refused(kind: 'egress' | 'page', target: string, reason: string): void
}
