import type { ExecutionContext } from 'hono'
import { createDeferredApp, type DeferredApp } from './deferred'
import { consumeJobBatch, type QueueBatch } from './worker-jobs'
import { startWorkerService, type WorkerService, workerLogger } from './worker-service'

/**
 * The Cloudflare Workers entry point. Bindings arrive with the first request, so the app is built
 * then and kept in module state: an isolate serves many requests, and rebuilding config, routes and
 * the OpenAPI document per request would cost more CPU than most tool calls.
 */
let deferred: DeferredApp<WorkerService> | undefined

function started(env: Record<string, unknown>): DeferredApp<WorkerService> {
  if (!deferred) {
    const log = workerLogger(env)
    deferred = createDeferredApp(() => startWorkerService(env, log), log)
  }
  return deferred
}

export default {
  fetch(request: Request, env: Record<string, unknown>, context: ExecutionContext): Promise<Response> | Response {
    return started(env).app.fetch(request, env, context)
  },
  /** The job Queue's consumer (and its dead-letter queue's): see infra/cloudflare/wrangler.toml. */
  async queue(batch: QueueBatch, env: Record<string, unknown>): Promise<void> {
    const service = await started(env).started()
    await consumeJobBatch(batch, service, workerLogger(env))
  },
}
