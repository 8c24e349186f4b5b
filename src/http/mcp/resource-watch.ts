import { isToolError } from '../../core/errors'
import type { Logger } from '../../core/logger'
import type { Surface, SurfaceRequest } from './surface'

/**
 * How subscribed resources are watched, for both eras (a 2025 session's GET stream, a 2026-07-28
 * subscriptions/listen stream): by asking, every few seconds, for each resource's version (surface.ts
 * versionOf: a workspace file's etag, a digest of a source's resource). Polling, because a change can
 * come from any instance of the fleet, from a sandbox's sync-back, or from a source's server, and the
 * bucket is the one place all of them meet; it costs one HEAD per workspace resource per round.
 */
export const watchPollMs = 2_000

/**
 * How long one stream stays open: a client reopens a stream that ends (2025 clients reconnect their
 * GET stream at once, 2026-07-28 clients listen again), and a stream that ends frees the instance
 * (a Lambda function's response may not outlive 15 minutes).
 */
export const streamLifetimeMs = 5 * 60_000

/** A comment line this often keeps proxies and load balancers from closing a quiet stream. */
export const keepAliveMs = 15_000

export interface ResourceChange {
  uri: string
  seen: string
  now: string
}

/**
 * The resources whose version is no longer the one seen. A resource this key may no longer read, or
 * whose source fails this round, is left for the next round: a subscription never tells of a change
 * the client could not read, and a flaky source is not a change.
 */
export async function changesOf(
  surface: Surface,
  request: SurfaceRequest,
  watched: Record<string, string>,
  log: Logger,
): Promise<ResourceChange[]> {
  const changes: ResourceChange[] = []
  for (const [uri, seen] of Object.entries(watched)) {
    if (request.signal.aborted) break
    let now: string
    try {
      now = await surface.versionOf(request, uri)
    } catch (error) {
      if (!isToolError(error)) log.warn('a subscribed resource could not be read', { uri, error: String(error) })
      continue
    }
    if (now !== seen) changes.push({ uri, seen, now })
  }
  return changes
}

/**
 * Runs `round` every `everyMs` until `signal` aborts or `round` answers false: one round at a time,
 * the next starting `everyMs` after the last ended.
 */
export async function everyRound(round: () => Promise<boolean>, everyMs: number, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    if (!(await round())) return
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, everyMs)
      signal.addEventListener('abort', done, { once: true })
      function done() {
        clearTimeout(timer)
        signal.removeEventListener('abort', done)
        resolve()
      }
    })
  }
}
