import type { Redis } from 'ioredis'
import { withinMs } from './within'

/**
 * KEYS[1]: the tenant's unfinished jobs (a sorted set scored by Redis's clock at submission). ARGV: job
 * id, the cap, forget-after ms. 1: counted; 0: at the cap. Entries older than the job TTL are dropped
 * first, so a job whose end was never reported (Redis lost a message) cannot hold a slot for ever.
 */
const claimScript = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[3]))
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 1 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
return 1`

export interface JobSlots {
  /** Counts the job for its tenant: false when the tenant already has `max` unfinished. */
  claim(tenant: string, id: string, max: number): Promise<boolean>
  /** The job finished (or will never run): its slot is free. */
  release(tenant: string, id: string): Promise<void>
}

/**
 * Each tenant's unfinished jobs across the fleet (TOOLPORT_JOBS_PER_TENANT): claimed atomically at
 * submission, released by the worker that finishes the job (or gives up on it), whichever instance that is.
 */
export function createRedisJobSlots(client: Redis, prefix: string, forgetAfterMs: number, timeoutMs: number): JobSlots {
  const redis = client as Redis & {
    toolportJobClaim(key: string, id: string, max: number, forget: number): Promise<number>
  }
  client.defineCommand('toolportJobClaim', { numberOfKeys: 1, lua: claimScript })
  const keyOf = (tenant: string) => `${prefix}:active-jobs:${tenant}`
  return {
    async claim(tenant, id, max) {
      return (await withinMs(timeoutMs, redis.toolportJobClaim(keyOf(tenant), id, max, forgetAfterMs))) === 1
    },
    async release(tenant, id) {
      await withinMs(timeoutMs, client.zrem(keyOf(tenant), id))
    },
  }
}
