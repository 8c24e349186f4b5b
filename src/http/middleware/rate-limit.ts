import type { MiddlewareHandler } from 'hono'
import { ToolError } from '../../core/errors'
import type { AppEnv } from '../env'
import { setResponseHeaders } from './response-headers'

export interface RateLimit {
  /** Calls allowed per window. */
  count: number
  windowSeconds: number
}

/** Parses "60/min", "10/s", "1000/hour" (TOOLPORT_RATE_LIMIT). */
export function parseRateLimit(value: string): RateLimit | undefined {
  const match = /^\s*(\d+)\s*\/\s*(s|sec|second|m|min|minute|h|hour)\s*$/i.exec(value)
  if (!match) return undefined
  const seconds: Record<string, number> = { s: 1, sec: 1, second: 1, m: 60, min: 60, minute: 60, h: 3600, hour: 3600 }
  const count = Number(match[1])
  return count > 0 ? { count, windowSeconds: seconds[(match[2] as string).toLowerCase()] as number } : undefined
}

/**
 * A token bucket per key: `count` calls, refilled evenly over the window, so bursts up to the limit
 * pass and a steady caller is never starved at a window edge. Per instance; behind a load balancer
 * each instance enforces its own share. Headers follow the IETF RateLimit header fields draft.
 */
export function rateLimitMiddleware(limit: RateLimit, now: () => number = Date.now): MiddlewareHandler<AppEnv> {
  const buckets = new Map<string, { tokens: number; updated: number }>()
  const refillPerMs = limit.count / (limit.windowSeconds * 1000)
  return async (context, next) => {
    const key = context.get('principal')?.id ?? 'anonymous'
    const time = now()
    const bucket = buckets.get(key) ?? { tokens: limit.count, updated: time }
    bucket.tokens = Math.min(limit.count, bucket.tokens + (time - bucket.updated) * refillPerMs)
    bucket.updated = time
    buckets.set(key, bucket)
    const headers = (remaining: number) => ({
      'RateLimit-Limit': String(limit.count),
      'RateLimit-Remaining': String(Math.max(0, Math.floor(remaining))),
      'RateLimit-Reset': String(Math.ceil((limit.count - remaining) / refillPerMs / 1000)),
      'RateLimit-Policy': `${limit.count};w=${limit.windowSeconds}`,
    })
    if (bucket.tokens < 1) {
      const retryAfter = Math.ceil((1 - bucket.tokens) / refillPerMs / 1000)
      throw new ToolError('rate_limited', `This key may make ${limit.count} calls per ${limit.windowSeconds} s.`, {
        hint: `Wait ${retryAfter} seconds (Retry-After) before the next call.`,
        headers: { ...headers(bucket.tokens), 'Retry-After': String(retryAfter) },
      })
    }
    bucket.tokens -= 1
    await next()
    setResponseHeaders(context, headers(bucket.tokens))
  }
}
