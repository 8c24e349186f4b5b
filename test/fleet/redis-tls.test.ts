import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callTool, type FleetInstance, startInstance } from '../support/fleet'
import { type RedisServer, startRedis } from '../support/redis'
import { type S3rverInstance, startS3rver } from '../support/s3rver'

/**
 * TOOLPORT_REDIS_URL with `rediss://` and a password, as managed Redis services hand them out: Debian's
 * redis-server with TLS only and `requirepass`, its certificate signed by a throw-away CA the instance
 * trusts through NODE_EXTRA_CA_CERTS. A wrong password or an untrusted certificate is not worked around:
 * what needs Redis answers 503 with the hint, and synchronous calls go on.
 */
let redis: RedisServer
let bucket: S3rverInstance
const started: FleetInstance[] = []

async function launch(name: string, env: Record<string, string>): Promise<FleetInstance> {
  const instance = await startInstance(bucket, { name, env })
  started.push(instance)
  return instance
}

async function submit(instance: FleetInstance, path: string) {
  const response = await fetch(`${instance.url}/v1/tools/write_file?async=true&workspace=tls`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ path, content: 'over tls\n' }),
  })
  return { status: response.status, body: (await response.json()) as Record<string, string> }
}

beforeAll(async () => {
  ;[redis, bucket] = await Promise.all([startRedis({ password: 'fleet pass/1', tls: true }), startS3rver()])
}, 60_000)

afterAll(async () => {
  await Promise.all(started.map((instance) => instance.kill()))
  await redis?.stop()
  await bucket?.stop()
})

describe('the fleet engine over rediss:// with a password', () => {
  it('runs a job when the URL, password and CA are right', async () => {
    expect(redis.url).toMatch(/^rediss:\/\/:fleet%20pass%2F1@127\.0\.0\.1:\d+$/)
    const instance = await launch('tls', { TOOLPORT_REDIS_URL: redis.url, NODE_EXTRA_CA_CERTS: redis.caFile ?? '' })
    let answer = await submit(instance, 'tls.txt')
    // The connection may still be opening when the instance starts answering.
    for (let tries = 0; answer.status === 503 && tries < 50; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 200))
      answer = await submit(instance, 'tls.txt')
    }
    expect(answer.status).toBe(202)
    let status = answer.body.status
    for (let polls = 0; polls < 150 && status !== 'succeeded' && status !== 'failed'; polls++) {
      await new Promise((resolve) => setTimeout(resolve, 200))
      status = ((await (await fetch(`${instance.url}/v1/jobs/${answer.body.job_id}`)).json()) as { status: string })
        .status
    }
    expect(status).toBe('succeeded')
  }, 60_000)

  it('answers 503 with a hint for a wrong password or an untrusted certificate, and keeps synchronous calls', async () => {
    const wrongPassword = redis.url.replace('fleet%20pass%2F1', 'wrong')
    const refused = [
      await launch('bad-pass', { TOOLPORT_REDIS_URL: wrongPassword, NODE_EXTRA_CA_CERTS: redis.caFile ?? '' }),
      await launch('bad-ca', { TOOLPORT_REDIS_URL: redis.url }),
    ]
    for (const instance of refused) {
      const answer = await submit(instance, `never-${instance.name}.txt`)
      expect(answer.status, instance.name).toBe(503)
      expect(answer.body.detail).toMatch(/Redis/)
      expect(answer.body.hint).toMatch(/TOOLPORT_REDIS_URL/)
      const sync = await callTool(instance, 'write_file', { path: `sync-${instance.name}.txt`, content: 'ok' }, 'tls')
      expect(sync?.status, instance.name).toBe(200)
    }
  }, 60_000)
})
