import type { Redis } from 'ioredis'
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible'
import type { RateDecision, RateLimiter } from '../../http/middleware/rate-limit'

/**
 * TOOLPORT_RATE_LIMIT across the fleet: one counter per key and window in Redis (rate-limiter-flexible's
 * fixed window, an atomic INCR with expiry), so N instances together admit the limit, not N times it.
 * While Redis is unreachable, each instance counts in memory (the library's insurance limiter): calls
 * keep flowing, limited per instance, instead of failing with the engine.
 */
export function createRedisRateLimiter(
  client: Redis,
  keyPrefix: string,
  limit: { count: number; windowSeconds: number },
): RateLimiter {
  const limiter = new RateLimiterRedis({
    storeClient: client,
    keyPrefix,
    points: limit.count,
    duration: limit.windowSeconds,
    insuranceLimiter: new RateLimiterMemory({ points: limit.count, duration: limit.windowSeconds }),
  })
  const decision = (result: RateLimiterRes, allowed: boolean): RateDecision => ({
    allowed,
    remaining: Math.max(0, result.remainingPoints),
    resetSeconds: Math.ceil(result.msBeforeNext / 1000),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil(result.msBeforeNext / 1000)),
  })
  return {
    async consume(key) {
      try {
        return decision(await limiter.consume(key), true)
      } catch (refusal) {
        if (refusal instanceof RateLimiterRes) return decision(refusal, false)
        throw refusal
      }
    },
  }
}
