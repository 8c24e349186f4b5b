import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SessionRegistry } from '../../src/browser/session/registry'
import { silentLogger } from '../../src/core/logger'
import { createRedisSessionRegistry } from '../../src/runtimes/fleet/redis-session-registry'
import { type RedisServer, startRedis } from '../support/redis'

// The browser session registry against a real redis-server, two "instances" in one process (each with
// its own connection, as two processes would have).

let redis: RedisServer
const clients: Redis[] = []
const registries: SessionRegistry[] = []

function registry(): SessionRegistry {
  const client = new Redis(redis.url, { maxRetriesPerRequest: 1 })
  client.on('error', () => {
    // Redis stopped on purpose by a test: the client reconnects by itself.
  })
  clients.push(client)
  const created = createRedisSessionRegistry(client, 'registry-test', silentLogger, 3_000)
  registries.push(created)
  return created
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function until(check: () => boolean, limitMs: number): Promise<void> {
  const deadline = Date.now() + limitMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached')
    await sleep(100)
  }
}

beforeAll(async () => {
  redis = await startRedis()
})

afterAll(async () => {
  for (const created of registries) created.leave()
  for (const client of clients) client.disconnect()
  await redis?.stop()
})

describe('the browser session registry on Redis', () => {
  it('tells a live instance from a stopped one and from one it has not heard of', async () => {
    const one = registry()
    const two = registry()
    const oneHeld: Array<{ id: string; tenant: string }> = []
    one.join('one', () => oneHeld)
    two.join('two', () => [])
    await until(() => two.alive('one') === true && one.alive('two') === true, 10_000)
    // Never heard of: not called stopped (it may have joined after the last beat).
    expect(two.alive('never')).toBeUndefined()

    // The tenant cap counts sessions of every instance; one's session is renewed by its beat.
    expect(await one.claim('acme', 's-1', 2)).toBe(true)
    oneHeld.push({ id: 's-1', tenant: 'acme' })
    expect(await two.claim('acme', 's-2', 2)).toBe(true)
    expect(await two.claim('acme', 's-3', 2)).toBe(false)
    // Claiming an id already counted is not a second session; another tenant has its own count.
    expect(await two.claim('acme', 's-2', 2)).toBe(true)
    expect(await two.claim('other', 's-4', 2)).toBe(true)
    two.release('acme', 's-2')
    await sleep(100)
    expect(await two.claim('acme', 's-5', 2)).toBe(true)
    two.release('acme', 's-5')

    // One stops beating (as a killed process does): it is stopped for the others after 3 missed beats,
    // and its session leaves the tenant's count.
    one.leave()
    await until(() => two.alive('one') === false, 20_000)
    expect(await two.claim('acme', 's-6', 2)).toBe(true)
    expect(await two.claim('acme', 's-7', 2)).toBe(true)
    expect(await two.claim('acme', 's-8', 2)).toBe(false)
  }, 60_000)

  it('refuses to count while Redis is down, and says nothing of liveness once its list is old', async () => {
    const three = registry()
    three.join('three', () => [])
    await until(() => three.alive('three') === true, 10_000)
    await redis.stop()
    await expect(three.claim('acme', 's-9', 5)).rejects.toThrow()
    await until(() => three.alive('three') === undefined, 20_000)
    await redis.start()
    await until(() => three.alive('three') === true, 20_000)
    expect(await three.claim('acme', 's-10', 5)).toBe(true)
  }, 60_000)
})
