import type { MiddlewareHandler } from 'hono'
import { type ErrorCode, errorCodes, statusOf } from '../../core/errors'
import type { Metrics } from '../../core/metrics'
import type { AppEnv } from '../env'

const codeByStatus = new Map<number, ErrorCode>(errorCodes.map((code) => [statusOf(code), code]))

/** Counts every tool call by tool and outcome (ok, or the error code), and storage failures. */
export function countCalls(metrics: Metrics): MiddlewareHandler<AppEnv> {
  return async (context, next) => {
    const started = performance.now()
    await next()
    const tool = context.get('tool')
    if (!tool) return
    const status = context.res.status
    const outcome = status < 400 ? 'ok' : (codeByStatus.get(status) ?? String(status))
    const seconds = (performance.now() - started) / 1000
    // A tenant's own tools are counted together: their names are that tenant's to know.
    if (context.get('toolOfTenant')) metrics.recordCall('(tenant source)', '(tenant)', outcome, seconds)
    else metrics.recordCall(tool, context.get('toolSource') ?? 'builtin', outcome, seconds)
    if (context.get('errorOrigin') === 'storage') metrics.recordStorageError()
  }
}
