import type { MiddlewareHandler } from 'hono'
import { ToolError } from '../../core/errors'

/** The process's shutdown state, owned by the runtime (SIGTERM handling lives in runtimes/node.ts). */
export interface Lifecycle {
  draining(): boolean
}

/** While the process drains for shutdown, new requests get 503 and a hint to retry elsewhere. */
export function refuseWhileDraining(lifecycle: Lifecycle): MiddlewareHandler {
  return async (_context, next) => {
    if (lifecycle.draining()) {
      throw new ToolError('unavailable', 'The service is shutting down.', {
        hint: 'Retry in a few seconds; another instance or the restarted service will answer.',
        headers: { 'Retry-After': '5', Connection: 'close' },
      })
    }
    await next()
  }
}
