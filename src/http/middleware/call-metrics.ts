import type { Context } from 'hono'
import { type ErrorCode, errorCodes, statusOf } from '../../core/errors'
import type { Metrics } from '../../core/metrics'
import type { AppEnv } from '../env'

const codeByStatus = new Map<number, ErrorCode>(errorCodes.map((code) => [statusOf(code), code]))

/**
 * Counts a finished tool call by tool and outcome (ok, or the error code), and a storage failure.
 * Called by requestContext, which times every request already: a middleware of its own around the
 * same next() was one more async layer on every request (0.3–0.6 µs each, Hono app.request here) and
 * a second clock.
 */
export function recordCallMetrics(metrics: Metrics, context: Context<AppEnv>, seconds: number): void {
  const tool = context.get('tool')
  if (!tool) return
  const status = context.res.status
  const outcome = status < 400 ? 'ok' : (codeByStatus.get(status) ?? String(status))
  // A tenant's own tools are counted together: their names are that tenant's to know.
  if (context.get('toolOfTenant')) metrics.recordCall('(tenant source)', '(tenant)', outcome, seconds)
  else metrics.recordCall(tool, context.get('toolSource') ?? 'builtin', outcome, seconds)
  if (context.get('errorOrigin') === 'storage') metrics.recordStorageError()
}
