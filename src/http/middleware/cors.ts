import type { MiddlewareHandler } from 'hono'
import { cors } from 'hono/cors'

/** CORS for the configured browser origins only; with none configured no CORS header is ever sent. */
export function corsFor(origins: readonly string[]): MiddlewareHandler {
  return cors({
    origin: origins.includes('*') ? '*' : [...origins],
    allowHeaders: ['Authorization', 'Content-Type', 'Accept', 'X-Request-Id'],
    allowMethods: ['GET', 'POST', 'OPTIONS'],
    exposeHeaders: ['X-Request-Id', 'Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
    maxAge: 600,
  })
}
