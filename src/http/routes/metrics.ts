import type { Hono } from 'hono'
import type { Authenticator } from '../../auth/authenticator'
import type { Metrics } from '../../core/metrics'
import type { AppEnv } from '../env'
import { authenticate } from '../middleware/authenticate'

/**
 * GET /metrics in Prometheus text format; behind a bearer key whenever keys are configured. The series
 * labelled by tenant show a key its own tenant's only: a scrape with one tenant's key learns nothing of
 * another's (with auth off, there is one caller and it sees them all).
 */
export function registerMetricsRoute(app: Hono<AppEnv>, metrics: Metrics, authenticator: Authenticator): void {
  app.get('/metrics', authenticate(authenticator, { noStore: false }), async (context) => {
    const principal = context.get('principal')
    const { contentType, body } = await metrics.render(principal.id === 'anonymous' ? {} : { tenant: principal.tenant })
    context.header('Content-Type', contentType)
    context.header('Cache-Control', 'no-store')
    return context.body(body)
  })
}
