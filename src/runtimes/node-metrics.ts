import { Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { Metrics, TenantUsage } from '../core/metrics'
import type { ToolServices } from '../tools/services'

/** prom-client metrics of one service instance; a fresh Registry, never the global default one. */
export function createNodeMetrics(services: () => Partial<ToolServices>): Metrics {
  const registry = new Registry()
  const calls = new Counter({
    name: 'toolport_tool_calls_total',
    help: 'Tool calls by tool, its source (builtin for built-ins) and outcome (ok, or the error code).',
    labelNames: ['tool', 'source', 'outcome'],
    registers: [registry],
  })
  const duration = new Histogram({
    name: 'toolport_tool_call_duration_seconds',
    help: 'Tool call latency by tool, source and outcome.',
    labelNames: ['tool', 'source', 'outcome'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  })
  let usage: () => readonly TenantUsage[] = () => []
  new Counter({
    name: 'toolport_tenant_calls_total',
    help: "Each tenant's tool calls by tool and outcome, counted by this instance (GET /v1/usage sums the fleet's).",
    labelNames: ['tenant', 'tool', 'outcome'],
    registers: [registry],
    collect() {
      this.reset()
      for (const entry of usage()) {
        for (const [tool, outcomes] of Object.entries(entry.calls)) {
          for (const [outcome, count] of Object.entries(outcomes))
            this.inc({ tenant: entry.tenant, tool, outcome }, count)
        }
      }
    },
  })
  const usageSums = [
    ['tool_seconds', 'toolport_tenant_tool_seconds_total', 'Seconds tool calls took, by tenant.'],
    [
      'sandbox_cpu_seconds',
      'toolport_tenant_sandbox_cpu_seconds_total',
      'CPU seconds of sandboxed commands, by tenant.',
    ],
    [
      'browser_session_seconds',
      'toolport_tenant_browser_session_seconds_total',
      'Seconds browser sessions were open, by tenant.',
    ],
    [
      'egress_bytes_out',
      'toolport_tenant_egress_bytes_out_total',
      'Bytes sandboxed commands sent through the egress proxy, by tenant.',
    ],
    [
      'egress_bytes_in',
      'toolport_tenant_egress_bytes_in_total',
      'Bytes sandboxed commands received through the egress proxy, by tenant.',
    ],
    ['fetch_bytes_out', 'toolport_tenant_fetch_bytes_out_total', 'Bytes outbound fetches sent, by tenant.'],
    ['fetch_bytes_in', 'toolport_tenant_fetch_bytes_in_total', 'Bytes outbound fetches received, by tenant.'],
  ] as const
  for (const [field, name, help] of usageSums) {
    new Counter({
      name,
      help,
      labelNames: ['tenant'],
      registers: [registry],
      collect() {
        this.reset()
        for (const entry of usage()) this.inc({ tenant: entry.tenant }, entry[field])
      },
    })
  }
  const storageErrors = new Counter({
    name: 'toolport_storage_errors_total',
    help: 'Calls that failed because storage was unavailable.',
    registers: [registry],
  })
  new Gauge({
    name: 'toolport_sandbox_runs',
    help: 'Sandboxed commands running (state=active) and waiting for a slot (state=queued).',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const limiter = services().shell?.limiter
      this.set({ state: 'active' }, limiter?.active ?? 0)
      this.set({ state: 'queued' }, limiter?.queued ?? 0)
    },
  })
  // Counted by the shell's egress proxy per tenant since start; read at each scrape.
  const egressTotals = () => services().shell?.egress.totals() ?? []
  new Counter({
    name: 'toolport_sandbox_egress_connections_total',
    help: 'Connections commands asked the egress proxy for, by tenant and outcome (allowed, refused).',
    labelNames: ['tenant', 'outcome'],
    registers: [registry],
    collect() {
      this.reset()
      for (const entry of egressTotals()) {
        this.inc({ tenant: entry.tenant, outcome: 'allowed' }, entry.allowed)
        this.inc({ tenant: entry.tenant, outcome: 'refused' }, entry.refused)
      }
    },
  })
  new Counter({
    name: 'toolport_sandbox_egress_bytes_total',
    help: 'Bytes through the egress proxy by tenant and direction (in: received by commands, out: sent).',
    labelNames: ['tenant', 'direction'],
    registers: [registry],
    collect() {
      this.reset()
      for (const entry of egressTotals()) {
        this.inc({ tenant: entry.tenant, direction: 'in' }, entry.bytesIn)
        this.inc({ tenant: entry.tenant, direction: 'out' }, entry.bytesOut)
      }
    },
  })
  new Gauge({
    name: 'toolport_browser_pages',
    help: 'Browser pages rendering (state=active) and waiting (state=queued).',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const status = services().browser?.status()
      this.set({ state: 'active' }, status?.active ?? 0)
      this.set({ state: 'queued' }, status?.queued ?? 0)
    },
  })
  new Gauge({
    name: 'toolport_process_resident_memory_bytes',
    help: 'Resident set size of the service process.',
    registers: [registry],
    collect() {
      this.set(process.memoryUsage.rss())
    },
  })
  // prom-client hashes the label set on every inc and observe; the children bound to one set skip that.
  // A set is a tool, its source and an outcome, all bounded by the catalog and the error codes.
  const children = new Map<
    string,
    { calls: ReturnType<typeof calls.labels>; duration: ReturnType<typeof duration.labels> }
  >()
  return {
    recordCall(tool, source, outcome, seconds) {
      const labels = `${tool}\u0000${source}\u0000${outcome}`
      let child = children.get(labels)
      if (!child) {
        child = { calls: calls.labels({ tool, source, outcome }), duration: duration.labels({ tool, source, outcome }) }
        children.set(labels, child)
      }
      child.calls.inc()
      child.duration.observe(seconds)
    },
    recordStorageError() {
      storageErrors.inc()
    },
    countUsage(totals) {
      usage = totals
    },
    async render(options = {}) {
      const body = await registry.metrics()
      const { tenant } = options
      if (tenant === undefined) return { contentType: registry.contentType, body }
      // Tenant names are identifiers ([A-Za-z0-9._-]): the label needs no unescaping to compare.
      const own = `tenant="${tenant}"`
      const shown = body
        .split('\n')
        .filter((line) => !line.startsWith('toolport_tenant_') || line.includes(own))
        .join('\n')
      return { contentType: registry.contentType, body: shown }
    },
  }
}
