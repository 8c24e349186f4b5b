import type { AddressInfo } from 'node:net'
import { createNodeServer } from './client-errors'
import { startNodeService } from './node-service'

// The Node entry point: build real dependencies from the environment, then serve until a signal.
let draining = false
// The command policy's parser runs in a worker: dist/policy-worker.js beside this bundle, or the source
// through tsx when run unbuilt (npm run dev).
const unbuilt = import.meta.url.endsWith('.ts')
const policyWorker = unbuilt
  ? { url: new URL('../sandbox/policy/policy-worker.ts', import.meta.url), typescript: true }
  : { url: new URL('./policy-worker.js', import.meta.url) }
// So does the tools' CPU-heavy work (page extraction, PDF layout, spreadsheets): dist/offload-worker.js.
const offloadWorker = unbuilt
  ? { url: new URL('./offload-worker.ts', import.meta.url), typescript: true }
  : { url: new URL('./offload-worker.js', import.meta.url) }
// And the OpenTelemetry exporter, when tracing is on: dist/otel-export-worker.js.
const traceExportWorker = unbuilt
  ? { url: new URL('./otel-export-worker.ts', import.meta.url), typescript: true }
  : { url: new URL('./otel-export-worker.js', import.meta.url) }
const service = await startNodeService(
  process.env,
  { draining: () => draining },
  { policyWorker, offloadWorker, traceExportWorker },
).catch((error: unknown) => {
  console.error(`toolport: ${(error as Error).message}`)
  process.exit(1)
})
const server = createNodeServer(service.app.fetch)
server.listen(service.config.http.port, service.config.http.host, () => {
  const info = server.address() as AddressInfo
  service.log.info('listening', {
    url: `http://${info.family === 'IPv6' ? `[${info.address}]` : info.address}:${info.port}`,
  })
})

// SIGTERM (a deploy, a scale-in): stop accepting, answer 503 on open connections, let calls in
// flight finish within the grace period, then exit 0 so the orchestrator sees a clean stop.
function shutdown(signal: string): void {
  if (draining) return
  draining = true
  const graceMs = service.config.process.shutdownGraceSeconds * 1000
  service.log.info('shutting down', { signal, grace_seconds: graceMs / 1000 })
  server.close(() => {
    service.log.info('stopped: every call in flight finished')
    // Stdio MCP servers of sources are stopped with the service.
    void service.close().finally(() => process.exit(0))
  })
  if ('closeIdleConnections' in server) server.closeIdleConnections()
  setTimeout(() => {
    service.log.warn('grace period over: exiting with calls still in flight')
    process.exit(0)
  }, graceMs).unref()
}
process.once('SIGTERM', () => shutdown('SIGTERM'))
process.once('SIGINT', () => shutdown('SIGINT'))
