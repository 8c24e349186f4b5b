import { readdirSync, readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ObjectStore } from '../../src/storage/store'
import { callTool, type FleetInstance, startInstance } from '../support/fleet'
import { type LocalWeb, startLocalWeb } from '../support/local-web'
import { type RedisServer, startRedis } from '../support/redis'
import { type S3rverInstance, s3StorageFor, startS3rver } from '../support/s3rver'
import { startSourceUpstreams } from '../support/source-upstreams'

/**
 * A Node fleet on Redis (TOOLPORT_REDIS_URL): three real instances, one bucket, Debian's redis-server
 * started and stopped by the suite. Jobs run once and move to another instance when theirs dies; a
 * cancel reaches the instance running the job; a rate limit holds for the fleet; source changes reach
 * every instance without waiting for the poll; with Redis down only what needs it says so.
 */
const workspace = 'jobs'
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

let redis: RedisServer
let bucket: S3rverInstance
let storage: ObjectStore
let upstream: LocalWeb
let receiver: LocalWeb
const slots: FleetInstance[] = []
const started: FleetInstance[] = []
let env: Record<string, string>

async function launch(name: string, extra: Record<string, string> = {}): Promise<FleetInstance> {
  const instance = await startInstance(bucket, { name, env: { ...env, ...extra } })
  started.push(instance)
  return instance
}

interface JobView {
  job_id: string
  status: string
  attempt: number
  max_attempts: number
  result?: { exit_code: number; files_changed: { path: string }[] }
}

async function submit(
  instance: FleetInstance,
  command: string,
  hook = '/hook',
): Promise<{ status: number; body: JobView & Record<string, unknown> }> {
  const callback = encodeURIComponent(`${receiver.url}${hook}`)
  const query = `async=true&workspace=${workspace}&callback_url=${callback}`
  const response = await fetch(`${instance.url}/v1/tools/execute_command?${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ command, timeout_seconds: 120 }),
  })
  return { status: response.status, body: (await response.json()) as JobView & Record<string, unknown> }
}

async function job(id: string, via: FleetInstance = slots[0] as FleetInstance): Promise<JobView> {
  const response = await fetch(`${via.url}/v1/jobs/${id}`)
  return (await response.json()) as JobView
}

/** Polls until `check` holds (a guard against hangs, not a timing requirement). */
async function until<T>(
  what: string,
  read: () => Promise<T>,
  check: (value: T) => boolean,
  limitMs = 90_000,
): Promise<T> {
  const deadline = Date.now() + limitMs
  for (;;) {
    const value = await read()
    if (check(value)) return value
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)}`)
    await sleep(200)
  }
}

/** The instance whose process tree runs a command line containing `token` (the sandbox's sh). */
function runnerOf(token: string): FleetInstance | undefined {
  const parentOf = (pid: number): number => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
    } catch {
      return 0
    }
  }
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    let command = ''
    try {
      command = readFileSync(`/proc/${entry}/cmdline`, 'utf8')
    } catch {
      continue
    }
    if (!command.includes(token) || command.includes('vitest')) continue
    for (let pid = Number(entry); pid > 1; pid = parentOf(pid)) {
      const instance = started.find((candidate) => candidate.child.pid === pid && candidate.child.exitCode === null)
      if (instance) return instance
    }
  }
  return undefined
}

/** Waits until the job runs, and answers the instance whose sandbox runs its command (named by `token`). */
async function runningOn(id: string, token: string): Promise<FleetInstance | undefined> {
  await until(
    'job running',
    () => job(id),
    (view) => view.status === 'running',
  )
  return until(
    'its sandbox',
    async () => runnerOf(token),
    (found) => found !== undefined,
  )
}

async function text(path: string): Promise<string | undefined> {
  const object = await storage.get(`tenants/default/workspaces/${workspace}/${path}`)
  return object ? new TextDecoder().decode(object.body) : undefined
}

beforeAll(async () => {
  ;[redis, bucket, upstream, receiver] = await Promise.all([
    startRedis(),
    startS3rver(),
    startSourceUpstreams(),
    startLocalWeb({
      '/hook': (_request, response) => {
        response.statusCode = 200
        response.end('ok')
      },
      // Refuses the first try of each delivery, takes the next.
      '/flaky': (request, response) => {
        const id = String(request.headers['x-toolport-delivery'])
        const tries = receiver.hits.filter((hit) => hit.headers['x-toolport-delivery'] === id).length
        response.statusCode = tries > 1 ? 200 : 503
        response.end()
      },
    }),
  ])
  storage = s3StorageFor(bucket)
  env = {
    TOOLPORT_REDIS_URL: redis.url,
    TOOLPORT_JOB_ATTEMPTS: '3',
    TOOLPORT_CALLBACK_BACKOFF_MS: '300',
    TOOLPORT_BROWSER_SESSIONS_PER_TENANT: '2',
    TOOLPORT_JOBS_PER_TENANT: '3',
    TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${upstream.port},127.0.0.1:${receiver.port}`,
  }
  slots.push(...(await Promise.all([launch('a'), launch('b'), launch('c')])))
}, 120_000)

afterAll(async () => {
  for (const instance of started) await instance.kill()
  await redis?.stop()
  await bucket?.stop()
  await upstream?.stop()
  await receiver?.stop()
})

/** The webhook deliveries the receiver got for a job: [delivery id, try number]. */
function deliveries(id: string): [string, string][] {
  return receiver.hits
    .filter((hit) => String(hit.headers['x-toolport-delivery']).startsWith(`${id}.`))
    .map((hit) => [String(hit.headers['x-toolport-delivery']), String(hit.headers['x-toolport-delivery-attempt'])])
}

describe('a Node fleet on Redis', () => {
  it('moves the job of a SIGKILLed instance to another, as attempt 2, and finishes it once', async () => {
    const submitted = await submit(slots[0] as FleetInstance, 'sleep 4; echo done >> job-kill.txt')
    expect(submitted.status).toBe(202)
    const id = submitted.body.job_id
    const holder = await runningOn(id, 'job-kill.txt')
    expect((await job(id)).attempt).toBe(1)
    const killedAt = Date.now()
    await holder?.kill()
    const survivor = slots.find((instance) => instance !== holder) as FleetInstance
    const finished = await until(
      'job finished elsewhere',
      () => job(id, survivor),
      (view) => ['succeeded', 'failed', 'cancelled'].includes(view.status),
    )
    console.log(`job taken over and finished ${Date.now() - killedAt} ms after the kill (4 s of work)`)
    expect(finished).toMatchObject({ status: 'succeeded', attempt: 2, max_attempts: 3 })
    expect(await text('job-kill.txt')).toBe('done\n')
    // One webhook, from the run that finished it: its delivery id names attempt 2.
    await until(
      'webhook',
      async () => deliveries(id),
      (found) => found.length > 0,
      30_000,
    )
    await sleep(1_000)
    expect(deliveries(id)).toEqual([[`${id}.2`, '1']])
    // The killed instance is replaced for the tests that follow.
    slots[slots.indexOf(holder as FleetInstance)] = await launch('a2')
  }, 150_000)

  it('runs each of three queued jobs exactly once while a fourth instance joins', async () => {
    const ids: string[] = []
    for (let index = 0; index < 3; index++) {
      const answer = await submit(slots[index % 3] as FleetInstance, `sleep 1; echo run >> once-${index}.txt`)
      expect(answer.status).toBe(202)
      ids.push(answer.body.job_id)
    }
    const joined = launch('d')
    const views = await Promise.all(
      ids.map((id) =>
        until(
          'job done',
          () => job(id),
          (view) => view.status === 'succeeded' || view.status === 'failed',
        ),
      ),
    )
    await joined
    for (const [index, view] of views.entries()) {
      expect(view).toMatchObject({ status: 'succeeded', attempt: 1 })
      expect(await text(`once-${index}.txt`)).toBe('run\n')
    }
    // One webhook per job, each delivered once.
    await until(
      'webhooks',
      async () => ids.map(deliveries),
      (found) => found.every((list) => list.length > 0),
      30_000,
    )
    await sleep(1_000)
    for (const id of ids) expect(deliveries(id)).toEqual([[`${id}.1`, '1']])
  }, 120_000)

  it('retries a refused webhook from the engine with the same delivery id and the next try number', async () => {
    const answer = await submit(slots[2] as FleetInstance, 'echo hook > hook.txt', '/flaky')
    const id = answer.body.job_id
    await until(
      'second try',
      async () => deliveries(id),
      (found) => found.length >= 2,
      30_000,
    )
    await sleep(1_000)
    expect(deliveries(id)).toEqual([
      [`${id}.1`, '1'],
      [`${id}.1`, '2'],
    ])
    // The signed body carries the same delivery id and try, so a receiver can trust them.
    const last = receiver.hits.filter((hit) => hit.headers['x-toolport-delivery'] === `${id}.1`).at(-1)
    expect(JSON.parse(last?.body ?? '{}')).toMatchObject({
      job_id: id,
      status: 'succeeded',
      delivery: { id: `${id}.1`, attempt: 2 },
    })
  }, 60_000)

  it('stops a running job on whichever instance runs it when another is asked to cancel', async () => {
    const submitted = await submit(slots[1] as FleetInstance, 'sleep 60; echo never > cancelled.txt')
    const id = submitted.body.job_id
    const holder = await runningOn(id, 'cancelled.txt')
    const asked = slots.find((instance) => instance !== holder) as FleetInstance
    const cancelled = await fetch(`${asked.url}/v1/jobs/${id}`, { method: 'DELETE' })
    expect(cancelled.status).toBe(200)
    // The sandbox process is gone long before the job's next heartbeat (10 s) would have found the cancel.
    const askedAt = Date.now()
    await until(
      'sandbox stopped',
      async () => runnerOf('cancelled.txt'),
      (found) => found === undefined,
      30_000,
    )
    console.log(`cancel reached the running instance's sandbox in ${Date.now() - askedAt} ms`)
    expect((await job(id)).status).toBe('cancelled')
    expect(await text('cancelled.txt')).toBeUndefined()
  }, 120_000)

  it('brings a source PUT and DELETE to every instance without waiting for the poll', async () => {
    const manifest = {
      id: 'calc',
      kind: 'http',
      protocol: 'jsonrpc',
      url: `${upstream.url}/rpc`,
      tools: [
        {
          name: 'calc_add',
          method: 'add',
          effect: 'read',
          description: 'Adds.',
          input_schema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
        },
      ],
    }
    const names = async (instance: FleetInstance) => {
      const response = await fetch(`${instance.url}/v1/tools`)
      return ((await response.json()) as { tools: { name: string }[] }).tools.map((tool) => tool.name)
    }
    // Every instance has read the tenant's sources once: from now on only the poll (every 5 minutes
    // with a fleet engine) or an announcement brings a change.
    for (const instance of slots) expect(await names(instance)).not.toContain('calc_add')
    const put = await fetch(`${slots[0]?.url}/v1/sources/calc`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(manifest),
    })
    expect(put.status).toBe(201)
    const putAt = Date.now()
    for (const instance of slots.slice(1)) {
      await until(
        'source seen',
        () => names(instance),
        (list) => list.includes('calc_add'),
        20_000,
      )
    }
    console.log(`source PUT served by every instance ${Date.now() - putAt} ms after its answer`)
    const removed = await fetch(`${slots[2]?.url}/v1/sources/calc`, { method: 'DELETE' })
    expect(removed.status).toBe(204)
    for (const instance of slots.slice(0, 2)) {
      await until(
        'source gone',
        () => names(instance),
        (list) => !list.includes('calc_add'),
        20_000,
      )
    }
  }, 60_000)

  it('holds the per-tenant job cap fleet-wide, and frees a slot when a job finishes on any instance', async () => {
    const ids: string[] = []
    for (let index = 0; index < 3; index++) {
      const answer = await submit(slots[index] as FleetInstance, `sleep 2; echo capped >> cap-${index}.txt`)
      expect(answer.status).toBe(202)
      ids.push(answer.body.job_id)
    }
    // The tenant has 3 unfinished jobs (TOOLPORT_JOBS_PER_TENANT) across the fleet: a fourth is refused on
    // any instance.
    for (const instance of slots) {
      const refused = await submit(instance as FleetInstance, 'echo never >> cap-never.txt')
      expect(refused.status).toBe(429)
      expect(String(refused.body.detail)).toContain('3 jobs queued or running')
    }
    await until(
      'one finished',
      async () => Promise.all(ids.map((id) => job(id))),
      (views) => views.some((view) => view.status === 'succeeded'),
    )
    const admitted = await until(
      'slot freed',
      () => submit(slots[2] as FleetInstance, 'echo after >> cap-after.txt'),
      (answer) => answer.status === 202,
      10_000,
    )
    await until(
      'all done',
      async () => Promise.all([...ids, admitted.body.job_id].map((id) => job(id))),
      (views) => views.every((view) => view.status === 'succeeded'),
    )
    expect(await text('cap-never.txt')).toBeUndefined()
  }, 90_000)

  it("holds the per-tenant session cap fleet-wide, and ends a killed holder's sessions everywhere", async () => {
    const [a, b, c] = slots as [FleetInstance, FleetInstance, FleetInstance]
    // One at a time: each instance launches its Chromium on its first session.
    const first = await callTool(a, 'browser_open', {}, workspace)
    expect(first?.status, JSON.stringify(first?.body)).toBe(200)
    const second = await callTool(b, 'browser_open', {}, workspace)
    expect(second?.status, JSON.stringify(second?.body)).toBe(200)
    // The tenant holds 2 sessions (TOOLPORT_BROWSER_SESSIONS_PER_TENANT) across the fleet: c, with none
    // of its own, refuses a third.
    const third = await callTool(c, 'browser_open', {}, workspace)
    expect(third?.status).toBe(429)
    expect(String(third?.body.detail)).toMatch(/across the fleet/)
    const id = String(first?.body.session_id)
    // A live holder elsewhere: 503 naming it.
    const elsewhere = await callTool(b, 'browser_snapshot', { session_id: id }, workspace)
    expect(elsewhere?.status, JSON.stringify(elsewhere?.body)).toBe(503)
    expect(elsewhere?.body.instance).toBe(id.split('-')[1])
    a.child.kill('SIGKILL')
    const killedAt = Date.now()
    const ended = await until(
      'session ended',
      async () => callTool(b, 'browser_snapshot', { session_id: id }, workspace),
      (answer) => answer?.status !== 503,
      30_000,
    )
    console.log(`a killed holder's session answered 404 ${Date.now() - killedAt} ms after the kill`)
    expect(ended?.status).toBe(404)
    expect(String(ended?.body.detail)).toContain('has ended: its instance stopped')
    // The dead instance's session left the tenant's count with it: c has room once its own view of the
    // fleet has seen a go (each instance reads the live list on its own interval, so not necessarily at
    // the moment b did; on a loaded machine the two moments were seconds apart).
    const reopened = await until(
      'room on c',
      async () => callTool(c, 'browser_open', {}, workspace),
      (answer) => answer?.status !== 429,
      30_000,
    )
    expect(reopened?.status, JSON.stringify(reopened?.body)).toBe(200)
    for (const [instance, answer] of [
      [b, second],
      [c, reopened],
    ] as const) {
      const closed = await callTool(instance, 'browser_close', { session_id: answer?.body.session_id }, workspace)
      expect(closed?.status).toBe(200)
    }
    slots[0] = await launch('a3')
  }, 120_000)

  it('answers job submission 503 naming Redis while it is down, keeps synchronous calls working, and runs jobs again once it is back', async () => {
    const instance = slots[0] as FleetInstance
    await redis.stop()
    const refused = await submit(instance, 'echo late >> redis-down.txt')
    expect(refused.status).toBe(503)
    expect(String(refused.body.detail)).toMatch(/Redis/)
    expect(String(refused.body.hint)).toMatch(/Synchronous calls still work/)
    const session = await callTool(instance, 'browser_open', {}, workspace)
    expect(session?.status).toBe(503)
    expect(String(session?.body.detail)).toMatch(/session registry \(Redis\)/)
    expect((await callTool(instance, 'write_file', { path: 'sync.txt', content: 'ok' }, workspace))?.status).toBe(200)
    expect((await callTool(instance, 'read_file', { path: 'sync.txt' }, workspace))?.status).toBe(200)
    await redis.start()
    const accepted = await until(
      'submission accepted again',
      () => submit(instance, 'echo back >> redis-up.txt'),
      (answer) => answer.status === 202,
      30_000,
    )
    const done = await until(
      'job after restart',
      () => job(accepted.body.job_id),
      (view) => view.status === 'succeeded',
      60_000,
    )
    expect(done.status).toBe('succeeded')
    expect(await text('redis-up.txt')).toBe('back\n')
  }, 120_000)

  it('admits a 10/min rate limit once across two instances', async () => {
    const limited = await Promise.all([
      launch('rate-1', { TOOLPORT_RATE_LIMIT: '10/min' }),
      launch('rate-2', { TOOLPORT_RATE_LIMIT: '10/min' }),
    ])
    const statuses: number[] = []
    for (let index = 0; index < 20; index++) {
      const answer = await callTool(limited[index % 2] as FleetInstance, 'list_files', {}, 'rate')
      statuses.push(answer?.status ?? 0)
    }
    expect(statuses.filter((status) => status === 200)).toHaveLength(10)
    expect(statuses.filter((status) => status === 429)).toHaveLength(10)
  }, 60_000)
})
