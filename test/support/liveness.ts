import { monitorEventLoopDelay } from 'node:perf_hooks'
import type { TestServer } from './server'

/**
 * The liveness bound of the stress suites: no call may block the event loop (or a /healthz round
 * trip) for this long, however long the call itself takes. A bound on starving the others, not a
 * speed target.
 */
export const maxBlockMs = 1_000

/**
 * Runs `heavy` beside a stream of /healthz calls to a server in this process (so its event loop is the
 * one measured); returns the heavy call's answer with the longest loop delay and /healthz round trip.
 */
export async function measureLiveness<T extends { status: number }>(
  server: TestServer,
  heavy: () => Promise<T>,
): Promise<T & { loopMs: number; healthMs: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 10 })
  histogram.enable()
  let done = false
  let slowestHealth = 0
  const health = (async () => {
    while (!done) {
      const started = performance.now()
      const response = await fetch(`${server.url}/healthz`)
      await response.arrayBuffer()
      slowestHealth = Math.max(slowestHealth, performance.now() - started)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  })()
  try {
    const answer = await heavy()
    return { ...answer, loopMs: histogram.max / 1e6, healthMs: slowestHealth }
  } finally {
    done = true
    await health
    histogram.disable()
  }
}
