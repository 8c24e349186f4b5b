import type { ExecutionContext } from 'hono'
import { createDeferredApp, type DeferredApp } from './deferred'
import { startWorkerService, workerLogger } from './worker-service'

/**
 * The Cloudflare Workers entry point. Bindings arrive with the first request, so the app is built
 * then and kept in module state: an isolate serves many requests, and rebuilding config, routes and
 * the OpenAPI document per request would cost more CPU than most tool calls.
 */
let deferred: DeferredApp | undefined

export default {
  fetch(request: Request, env: Record<string, unknown>, context: ExecutionContext): Promise<Response> | Response {
    if (!deferred) {
      const log = workerLogger(env)
      deferred = createDeferredApp(() => startWorkerService(env, log), log)
    }
    return deferred.app.fetch(request, env, context)
  },
}
