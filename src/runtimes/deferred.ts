import { Hono } from 'hono'
import { ToolError } from '../core/errors'
import type { Logger } from '../core/logger'
import { problemResponse } from '../http/problem'

/** Anything that answers fetch requests: the app createApp builds. */
export interface FetchApp {
  fetch(request: Request, env?: unknown): Response | Promise<Response>
}

export interface DeferredApp<T extends FetchApp = FetchApp> {
  /** Forwards every request to the real app once it is built. */
  app: Hono
  /** Settles when the first start attempt has (never rejects). */
  ready: Promise<void>
  /**
   * The started app, for work that does not arrive as an HTTP request (Lambda's job invocations).
   * After a failed start it tries once more, and rejects with the cause if that fails too.
   */
  started(): Promise<T>
}

type StartState<T> = { app: T } | { error: unknown }

/**
 * Serverless runtimes hand requests to a module-level handler, but building the app takes async work
 * (secrets, sandbox probe). This starts that work once and forwards to the result. A failed start
 * answers 503 problem+json (the cause goes to the log only: it may name buckets or secrets) and is
 * retried on the next request, so a transient failure such as throttling heals without a redeploy.
 */
export function createDeferredApp<T extends FetchApp>(start: () => Promise<T>, log: Logger): DeferredApp<T> {
  const attempt = (): Promise<StartState<T>> =>
    start().then(
      (app) => ({ app }),
      (error: unknown) => {
        log.error('toolport could not start', { error: error instanceof Error ? error.message : String(error) })
        return { error }
      },
    )
  let pending = attempt()
  const entry = new Hono()
  entry.all('*', async (context) => {
    const current = pending
    const state = await current
    if ('app' in state) return state.app.fetch(context.req.raw, context.env)
    // One retry for all the requests that saw this failure, not one each.
    if (pending === current) pending = attempt()
    return problemResponse(
      context,
      new ToolError('unavailable', 'The service could not start.', {
        hint: 'The operator has to fix the configuration (see the service log); try again later.',
        headers: { 'Retry-After': '30' },
      }),
    )
  })
  async function started(): Promise<T> {
    const current = pending
    const state = await current
    if ('app' in state) return state.app
    if (pending === current) pending = attempt()
    const retried = await pending
    if ('app' in retried) return retried.app
    throw retried.error
  }
  return { app: entry, ready: pending.then(() => undefined), started }
}
