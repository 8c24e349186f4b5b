import type { MiddlewareHandler } from 'hono'
import { ToolError } from '../../core/errors'
import type { RateLimit } from '../../core/rate-limit'
import type { AppEnv } from '../env'
import { setResponseHeaders } from './response-headers'

export { parseRateLimit, type RateLimit } from '../../core/rate-limit'

/** What a limiter answers for one call of a key. */
export interface RateDecision {
  allowed: boolean
  /** Calls left in the window after this one. */
  remaining: number
  /** Seconds until the limit is full again. */
  resetSeconds: number
  /** When refused: seconds until the next call would pass. */
  retryAfterSeconds: number
}

/** Counts calls per key: in this process (the default), or across the fleet (Redis). */
export interface RateLimiter {
  consume(key: string): Promise<RateDecision> | RateDecision
}

/**
 * A token bucket per key: `count` calls, refilled evenly over the window, so bursts up to the limit
 * pass and a steady caller is never starved at a window edge. Per instance: with several instances and
 * no fleet engine, each enforces its own share (TOOLPORT_REDIS_URL makes the limit fleet-wide).
 */
export function createTokenBuckets(limit: RateLimit, now: () => number = Date.now): RateLimiter {
  const buckets = new Map<string, { tokens: number; updated: number }>()
  const refillPerMs = limit.count / (limit.windowSeconds * 1000)
  return {
    consume(key) {
      const time = now()
      const bucket = buckets.get(key) ?? { tokens: limit.count, updated: time }
      bucket.tokens = Math.min(limit.count, bucket.tokens + (time - bucket.updated) * refillPerMs)
      bucket.updated = time
      buckets.set(key, bucket)
      const allowed = bucket.tokens >= 1
      if (allowed) bucket.tokens -= 1
      return {
        allowed,
        remaining: Math.max(0, Math.floor(bucket.tokens)),
        resetSeconds: Math.ceil((limit.count - bucket.tokens) / refillPerMs / 1000),
        retryAfterSeconds: allowed ? 0 : Math.ceil((1 - bucket.tokens) / refillPerMs / 1000),
      }
    },
  }
}

/** Headers follow the IETF RateLimit header fields draft. */
export function rateLimitMiddleware(
  limit: RateLimit,
  limiter: RateLimiter = createTokenBuckets(limit),
): MiddlewareHandler<AppEnv> {
  return async (context, next) => {
    const key = context.get('principal')?.id ?? 'anonymous'
    const decision = await limiter.consume(key)
    const headers = {
      'RateLimit-Limit': String(limit.count),
      'RateLimit-Remaining': String(decision.remaining),
      'RateLimit-Reset': String(decision.resetSeconds),
      'RateLimit-Policy': `${limit.count};w=${limit.windowSeconds}`,
    }
    if (!decision.allowed) {
      throw new ToolError('rate_limited', `This key may make ${limit.count} calls per ${limit.windowSeconds} s.`, {
        hint: `Wait ${decision.retryAfterSeconds} seconds (Retry-After) before the next call.`,
        headers: { ...headers, 'Retry-After': String(decision.retryAfterSeconds) },
      })
    }
    await next()
    setResponseHeaders(context, headers)
  }
}
