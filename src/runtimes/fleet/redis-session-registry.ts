import type { Redis } from 'ioredis'
import type { SessionRegistry } from '../../browser/session/registry'
import type { Logger } from '../../core/logger'
import { withinMs } from './within'

/** How often an instance beats (and renews its sessions). */
const beatMs = 2_000
/** An instance, or a session, not renewed for this long counts as gone: 3 missed beats. */
const staleMs = 6_000
/**
 * How long a stopped instance stays known as stopped. An instance never heard of is not called stopped:
 * it may have joined after this instance's last beat.
 */
const rememberedMs = 7 * 86_400_000

// Both scripts read Redis's clock, never an instance's: instances' clocks may disagree (a clock ahead
// must not make another instance look dead, or keep a dead one's sessions counted).
const now = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`

/**
 * KEYS[1]: the instances (a sorted set scored by last beat); KEYS[2..]: the tenants' session sets, one
 * per session this instance holds. ARGV: instance, stale ms, remembered ms, then the session ids in KEYS'
 * order. Answers the instances alive now and those stopped (not heard from for `stale`).
 */
const beatScript = `${now}
local stale = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[3]))
for i = 2, #KEYS do
  redis.call('ZADD', KEYS[i], now, ARGV[i + 2])
  redis.call('PEXPIRE', KEYS[i], stale * 10)
end
return { redis.call('ZRANGEBYSCORE', KEYS[1], now - stale, '+inf'),
  redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. (now - stale)) }`

/** KEYS[1]: the tenant's session set. ARGV: session id, the cap, stale ms. 1: counted; 0: at the cap. */
const claimScript = `${now}
local stale = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - stale)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 1 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('PEXPIRE', KEYS[1], stale * 10)
return 1`

interface RegistryCommands {
  toolportSessionBeat(...args: Array<string | number>): Promise<[string[], string[]]>
  toolportSessionClaim(key: string, id: string, max: number, stale: number): Promise<number>
}

/**
 * The browser session registry on Redis: instance liveness as a sorted set of last beats, and each
 * tenant's sessions as a sorted set renewed by their holder's beat. A killed instance stops beating: it
 * counts as stopped 6 s later (its sessions answer 404 "ended" everywhere within a beat after that), and its
 * sessions leave their tenant's count at the same time. Scripts keep each step atomic; the keys of one
 * beat span several tenants, so this needs one Redis (or Valkey) node, not a cluster.
 */
export function createRedisSessionRegistry(
  client: Redis,
  prefix: string,
  log: Logger,
  timeoutMs: number,
): SessionRegistry {
  const redis = client as Redis & RegistryCommands
  client.defineCommand('toolportSessionBeat', { lua: beatScript })
  client.defineCommand('toolportSessionClaim', { numberOfKeys: 1, lua: claimScript })
  const instances = `${prefix}:instances`
  const sessionsOf = (tenant: string) => `${prefix}:sessions:${tenant}`
  let timer: ReturnType<typeof setInterval> | undefined
  let known: { live: Set<string>; stopped: Set<string>; at: number } | undefined
  let failing = false

  return {
    join(instanceId, held) {
      const beat = async () => {
        const sessions = held()
        try {
          const [live, stopped] = await redis.toolportSessionBeat(
            1 + sessions.length,
            instances,
            ...sessions.map((session) => sessionsOf(session.tenant)),
            instanceId,
            staleMs,
            rememberedMs,
            ...sessions.map((session) => session.id),
          )
          known = { live: new Set(live), stopped: new Set(stopped), at: Date.now() }
          if (failing) log.info('browser session registry reachable again')
          failing = false
        } catch (error) {
          if (!failing) log.warn('browser session registry beat failed', { cause: String(error) })
          failing = true
        }
      }
      void beat()
      timer = setInterval(() => void beat(), beatMs)
      timer.unref?.()
    },
    alive(instanceId) {
      // A list older than a few beats (Redis unreachable) says nothing either way.
      if (!known || Date.now() - known.at > staleMs) return undefined
      if (known.live.has(instanceId)) return true
      return known.stopped.has(instanceId) ? false : undefined
    },
    async claim(tenant, id, max) {
      if (client.status !== 'ready') throw new Error(`redis connection is ${client.status}`)
      const answer = await withinMs(timeoutMs, redis.toolportSessionClaim(sessionsOf(tenant), id, max, staleMs))
      return answer === 1
    },
    release(tenant, id) {
      void client.zrem(sessionsOf(tenant), id).catch(() => {
        // Unreachable: the session drops out of the count when its renewals lapse.
      })
    },
    leave() {
      if (timer) clearInterval(timer)
      timer = undefined
    },
  }
}
