import type { MiddlewareHandler } from 'hono'
import type { Logger } from '../../core/logger'
import type { AppEnv } from '../env'
import { setResponseHeaders } from './response-headers'

const requestIdPattern = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * Gives every request an id (the caller's X-Request-Id when it is sane, else a new one), echoes it,
 * and writes one access-log line per request with its tenant and tool.
 */
export function requestContext(log: Logger): MiddlewareHandler<AppEnv> {
  return async (context, next) => {
    const started = performance.now()
    const offered = context.req.header('x-request-id')
    const requestId = offered && requestIdPattern.test(offered) ? offered : crypto.randomUUID()
    context.set('requestId', requestId)
    await next()
    setResponseHeaders(context, { 'X-Request-Id': requestId, 'X-Content-Type-Options': 'nosniff' })
    log.info('request', {
      request_id: requestId,
      method: context.req.method,
      path: context.req.path,
      status: context.res.status,
      tenant: context.get('principal')?.tenant,
      tool: context.get('tool'),
      source: context.get('toolSource'),
      duration_ms: Math.round(performance.now() - started),
    })
  }
}
