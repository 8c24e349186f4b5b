import type { Hono } from 'hono'
import type { Authenticator } from '../../auth/authenticator'
import type { Metrics } from '../../core/metrics'
import type { AppEnv } from '../env'
import { authenticate } from '../middleware/authenticate'

/** GET /metrics in Prometheus text format; behind a bearer key whenever keys are configured. */
export function registerMetricsRoute(app: Hono<AppEnv>, metrics: Metrics, authenticator: Authenticator): void {
  app.get('/metrics', authenticate(authenticator, { noStore: false }), async (context) => {
    const { contentType, body } = await metrics.render()
    context.header('Content-Type', contentType)
    context.header('Cache-Control', 'no-store')
    return context.body(body)
  })
}
