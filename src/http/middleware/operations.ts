import type { Hono, MiddlewareHandler } from 'hono'
import { cors } from 'hono/cors'
import type { Authenticator } from '../../auth/authenticator'
import { type ErrorCode, errorCodes, statusOf, ToolError } from '../../core/errors'
import type { Metrics } from '../../core/metrics'
import type { AppEnv } from '../env'

/** The process's shutdown state, owned by the runtime (SIGTERM handling lives in runtimes/node.ts). */
export interface Lifecycle {
  draining(): boolean
}

export interface EdgeOptions {
  lifecycle: Lifecycle | undefined
  corsOrigins: readonly string[]
  metrics: Metrics | undefined
}

const codeByStatus = new Map<number, ErrorCode>(errorCodes.map((code) => [statusOf(code), code]))

/**
 * Middleware that runs before anything else: refuse new work while draining, answer CORS (closed
 * unless origins are configured), and count every tool call by outcome.
 */
export function registerEdgeMiddleware(app: Hono<AppEnv>, options: EdgeOptions): void {
  if (options.lifecycle) {
    const lifecycle = options.lifecycle
    app.use('*', async (_context, next) => {
      if (lifecycle.draining()) {
        throw new ToolError('unavailable', 'The service is shutting down.', {
          hint: 'Retry in a few seconds; another instance or the restarted service will answer.',
          headers: { 'Retry-After': '5', Connection: 'close' },
        })
      }
      await next()
    })
  }
  if (options.corsOrigins.length > 0) {
    app.use(
      '*',
      cors({
        origin: options.corsOrigins.includes('*') ? '*' : [...options.corsOrigins],
        allowHeaders: ['Authorization', 'Content-Type', 'Accept', 'X-Request-Id'],
        allowMethods: ['GET', 'POST', 'OPTIONS'],
        exposeHeaders: ['X-Request-Id', 'Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
        maxAge: 600,
      }),
    )
  }
  if (options.metrics) {
    const metrics = options.metrics
    app.use('*', async (context, next) => {
      const started = performance.now()
      await next()
      const tool = context.get('tool')
      if (!tool) return
      const status = context.res.status
      const outcome = status < 400 ? 'ok' : (codeByStatus.get(status) ?? String(status))
      metrics.recordCall(tool, outcome, (performance.now() - started) / 1000)
      if (context.get('errorOrigin') === 'storage') metrics.recordStorageError()
    })
  }
}

/** GET /metrics in Prometheus text format; behind a bearer key whenever keys are configured. */
export function registerMetricsRoute(app: Hono<AppEnv>, metrics: Metrics, authenticator: Authenticator): void {
  const authenticate: MiddlewareHandler<AppEnv> = async (context, next) => {
    context.set('principal', await authenticator.authenticate(context.req.header('authorization')))
    await next()
  }
  app.get('/metrics', authenticate, async (context) => {
    const { contentType, body } = await metrics.render()
    context.header('Content-Type', contentType)
    context.header('Cache-Control', 'no-store')
    return context.body(body)
  })
}
