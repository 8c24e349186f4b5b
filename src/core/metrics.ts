/** One tenant's usage as /metrics shows it (usage/usage-meter.ts counts it). */
export interface TenantUsage {
  tenant: string
  calls: Record<string, Record<string, number>>
  tool_seconds: number
  sandbox_cpu_seconds: number
  browser_session_seconds: number
  egress_bytes_out: number
  egress_bytes_in: number
  fetch_bytes_out: number
  fetch_bytes_in: number
}

/**
 * What the HTTP layer reports for /metrics. The Node runtime implements it with prom-client; a runtime
 * without it (Workers) passes none and /metrics answers 404.
 */
export interface Metrics {
  /** `source` is the source that declared the tool, or 'builtin'. */
  recordCall(tool: string, source: string, outcome: string, seconds: number): void
  recordStorageError(): void
  /** Reads each tenant's usage (what this instance counted since start) at every scrape. */
  countUsage?(totals: () => readonly TenantUsage[]): void
  /** The Prometheus text exposition; with `tenant`, the per-tenant series of that tenant only. */
  render(options?: { tenant?: string }): Promise<{ contentType: string; body: string }>
}
