import { describe, expect, it } from 'vitest'
import { ToolError } from '../core/errors'
import type { Logger } from '../core/logger'
import { silentLogger } from '../core/logger'
import { createMemoryStorage } from '../storage/memory'
import type { ObjectStore } from '../storage/store'
import { createJobStore } from './job-store'
import { createJobRunner, type JobSpec } from './runner'
import type { JobRecord } from './types'

const spec: JobSpec = {
  tenant: 'acme',
  principal: { id: 'key-1', tools: null },
  tool: 'read_file',
  workspace: 'default',
  input: {},
  origin: null,
  callback_url: null,
}

/** Storage whose writes of job records in `status` land `delayMs` late: a slow write, widened on purpose. */
function slowWrites(storage: ObjectStore, status: JobRecord['status'], delayMs: number): ObjectStore {
  return {
    ...storage,
    async put(key, body, options) {
      if (typeof body === 'string' && key.endsWith('.json') && body.includes(`"status":"${status}"`)) {
        await new Promise((resolve) => setTimeout(resolve, delayMs))
      }
      return storage.put(key, body, options)
    },
  }
}

function deferred<T>() {
  let resolve: (value: T) => void = () => {}
  const promise = new Promise<T>((settle) => {
    resolve = settle
  })
  return { promise, resolve }
}

async function until(check: () => Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 200 && !(await check()); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

function runnerWith(
  storage: ObjectStore,
  execute: (signal: AbortSignal) => Promise<unknown>,
  heartbeatMs = 10_000,
  log: Logger = silentLogger,
) {
  const store = createJobStore(storage)
  const runner = createJobRunner({
    store,
    concurrency: 1,
    queueLimit: 4,
    ttlSeconds: 3600,
    run: (_job, signal) => execute(signal),
    describeError: (error) => ({ detail: String(error) }),
    onFinished: () => undefined,
    log,
    heartbeatMs,
  })
  return { store, runner }
}

describe('job state under concurrent writers', () => {
  it('a cancel that lands while the result is being stored answers with the stored outcome', async () => {
    const storage = createMemoryStorage()
    const work = deferred<string>()
    const { store, runner } = runnerWith(slowWrites(storage, 'succeeded', 300), () => work.promise)
    const job = await runner.submit(spec)
    await until(async () => (await store.load('acme', job.id))?.status === 'running')
    work.resolve('done')
    // The outcome is on its way to storage (its write is slow); the cancel comes in between.
    await new Promise((resolve) => setTimeout(resolve, 50))
    const answer = await runner.cancel('acme', job.id)
    await until(async () => (await store.load('acme', job.id))?.status !== 'running')
    const stored = await store.load('acme', job.id)
    expect(answer?.status).toBe(stored?.status)
    // Compare-and-swap orders the two writes: whichever landed first stands, whole. The other finds the
    // job finished and leaves it (never a cancelled job with a result, never running again).
    if (stored?.status === 'succeeded') expect(stored).toMatchObject({ result: 'done', error: null })
    else expect(stored).toMatchObject({ status: 'cancelled', result: null })
    runner.stop()
  })

  it('a heartbeat being written when a cancel comes does not bring the job back to running', async () => {
    const storage = createMemoryStorage()
    // One heartbeat write is held until the test lets it go, so the cancel surely meets it in flight.
    const held = deferred<void>()
    const release = deferred<void>()
    let armed = false
    const gated: ObjectStore = {
      ...storage,
      async put(key, body, options) {
        if (armed && typeof body === 'string' && key.endsWith('.json') && body.includes('"status":"running"')) {
          armed = false
          held.resolve()
          await release.promise
        }
        return storage.put(key, body, options)
      },
    }
    const { store, runner } = runnerWith(
      gated,
      (signal) =>
        new Promise((_resolve, reject) =>
          signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
        ),
      40,
    )
    const job = await runner.submit(spec)
    await until(async () => (await store.load('acme', job.id))?.status === 'running')
    armed = true
    await held.promise
    const answer = runner.cancel('acme', job.id)
    // The cancel lands while the heartbeat's conditional write is pending: the heartbeat then fails its
    // condition (it wrote over the version the cancel replaced) and leaves the job cancelled.
    await new Promise((resolve) => setTimeout(resolve, 100))
    release.resolve()
    expect((await answer)?.status).toBe('cancelled')
    // Later heartbeats (every 40 ms) find the job cancelled and leave it so.
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect((await store.load('acme', job.id))?.status).toBe('cancelled')
    runner.stop()
  })

  it('updates of one job never interleave: 20 concurrent read-modify-writes all count', async () => {
    const storage = createMemoryStorage()
    const { store, runner } = runnerWith(storage, () => new Promise(() => {}))
    const job = await runner.submit(spec)
    await Promise.all(
      Array.from({ length: 20 }, () =>
        store.update('acme', job.id, (current) =>
          current ? { ...current, progress: { output_bytes: (current.progress?.output_bytes ?? 0) + 1 } } : undefined,
        ),
      ),
    )
    expect((await store.load('acme', job.id))?.progress).toEqual({ output_bytes: 20 })
    expect((await storage.list('tenants/acme/jobs/')).objects.map((object) => object.key)).toEqual([
      `tenants/acme/jobs/${job.id}.json`,
    ])
    runner.stop()
  })

  it('logs a job that failed for an unexpected reason, with its id, but not one refused for its input', async () => {
    const errors: Array<{ message: string; fields: Record<string, unknown> | undefined }> = []
    const log: Logger = { ...silentLogger, error: (message, fields) => errors.push({ message, fields }) }
    const failures = [new TypeError('browser went away'), new ToolError('validation', 'bad input')]
    const { store, runner } = runnerWith(
      createMemoryStorage(),
      async () => {
        throw failures.shift()
      },
      10_000,
      log,
    )
    const unexpected = await runner.submit(spec)
    await until(async () => (await store.load('acme', unexpected.id))?.status === 'failed')
    const refused = await runner.submit(spec)
    await until(async () => (await store.load('acme', refused.id))?.status === 'failed')
    expect((await store.load('acme', unexpected.id))?.error).toEqual({ detail: 'TypeError: browser went away' })
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatchObject({
      message: 'job failed unexpectedly',
      fields: { job: unexpected.id, tool: 'read_file' },
    })
    expect(JSON.stringify(errors[0]?.fields)).toContain('browser went away')
    runner.stop()
  })
})

describe('attempts of a queue engine', () => {
  it('lets a later attempt take over a running job, and fences the earlier run off from writing its outcome', async () => {
    const storage = createMemoryStorage()
    const first = deferred<string>()
    const announced: JobRecord[] = []
    const instance = (work: () => Promise<string>) =>
      createJobRunner({
        store: createJobStore(storage),
        concurrency: 1,
        queueLimit: 4,
        ttlSeconds: 3600,
        run: () => work(),
        describeError: (error) => ({ detail: String(error) }),
        onFinished: (job) => {
          announced.push(job)
          return undefined
        },
        log: silentLogger,
        dispatch: async () => {},
      })
    const second = deferred<string>()
    const paused = instance(() => first.promise)
    const takeover = instance(() => second.promise)
    const job = await paused.submit(spec)
    const store = createJobStore(storage)
    const earlier = paused.runStored('acme', job.id, { attempt: 1, maxAttempts: 3 })
    await until(async () => (await store.load('acme', job.id))?.status === 'running')
    // A redelivery of attempt 1 (no lock lost) runs nothing; attempt 2 (the engine took it over) does.
    expect((await takeover.runStored('acme', job.id, { attempt: 1, maxAttempts: 3 }))?.attempt).toBe(1)
    const later = takeover.runStored('acme', job.id, { attempt: 2, maxAttempts: 3 })
    await until(async () => (await store.load('acme', job.id))?.attempt === 2)
    // The paused run wakes up and finishes while attempt 2 runs: its outcome is not the job's any more.
    first.resolve('first run')
    await earlier
    expect(await store.load('acme', job.id)).toMatchObject({ status: 'running', attempt: 2, max_attempts: 3 })
    second.resolve('second run')
    expect(await later).toMatchObject({ status: 'succeeded', result: 'second run', attempt: 2 })
    expect(announced.map((done) => done.result)).toEqual(['second run'])
    paused.stop()
    takeover.stop()
  })
})

describe('the per-tenant job cap', () => {
  it('refuses a tenant past its unfinished jobs, counting queued and running, and not other tenants', async () => {
    const storage = createMemoryStorage()
    const work = deferred<string>()
    const runner = createJobRunner({
      store: createJobStore(storage),
      concurrency: 1,
      queueLimit: 10,
      perTenantLimit: 2,
      ttlSeconds: 3600,
      run: () => work.promise,
      describeError: (error) => ({ detail: String(error) }),
      onFinished: () => undefined,
      log: silentLogger,
    })
    const running = await runner.submit(spec)
    await runner.submit(spec)
    const refused = await runner.submit(spec).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(ToolError)
    expect(refused).toMatchObject({ code: 'rate_limited', headers: { 'Retry-After': '10' } })
    expect(String((refused as ToolError).message)).toContain('2 jobs queued or running')
    // Another tenant has its own count.
    await runner.submit({ ...spec, tenant: 'other' })
    work.resolve('done')
    await until(async () => (await runner.get('acme', running.id))?.status === 'succeeded')
    // One of the two finished: room for one more, and no more than that.
    await expect(runner.submit(spec)).resolves.toMatchObject({ tenant: 'acme' })
    runner.stop()
  })
})
