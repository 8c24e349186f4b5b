import type { MiddlewareHandler } from 'hono'
import type { Logger } from '../../core/logger'
import type { Metrics } from '../../core/metrics'
import type { AppEnv } from '../env'
import { recordCallMetrics } from './call-metrics'
import { setResponseHeaders } from './response-headers'

const requestIdPattern = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * Gives every request an id (the caller's X-Request-Id when it is sane, else a new one), echoes it,
 * writes one access-log line per request with its tenant and tool, and counts tool calls in the
 * metrics when there are any.
 */
export function requestContext(log: Logger, metrics?: Metrics): MiddlewareHandler<AppEnv> {
  return async (context, next) => {
    const started = performance.now()
    const offered = context.req.header('x-request-id')
    const requestId = offered && requestIdPattern.test(offered) ? offered : crypto.randomUUID()
    context.set('requestId', requestId)
    await next()
    const durationMs = performance.now() - started
    if (metrics) recordCallMetrics(metrics, context, durationMs / 1000)
    setResponseHeaders(context, { 'X-Request-Id': requestId, 'X-Content-Type-Options': 'nosniff' })
    log.info('request', {
      request_id: requestId,
      method: context.req.method,
      path: context.req.path,
      status: context.res.status,
      tenant: context.get('principal')?.tenant,
      tool: context.get('tool'),
      source: context.get('toolSource'),
      duration_ms: Math.round(durationMs),
    })
  }
}
