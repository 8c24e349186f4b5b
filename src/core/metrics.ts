/**
 * What the HTTP layer reports for /metrics. The Node runtime implements it with prom-client; a runtime
 * without it (Workers) passes none and /metrics answers 404.
 */
export interface Metrics {
  /** `source` is the source that declared the tool, or 'builtin'. */
  recordCall(tool: string, source: string, outcome: string, seconds: number): void
  recordStorageError(): void
  /** The Prometheus text exposition. */
  render(): Promise<{ contentType: string; body: string }>
}
