import { describe, expect, it } from 'vitest'
import { silentLogger } from '../core/logger'
import { createJobStore } from '../jobs/job-store'
import { createJobRunner, type JobSpec } from '../jobs/runner'
import { createMemoryStorage } from '../storage/memory'
import type { ObjectStore } from '../storage/store'
import { consumeJobBatch, noQueueDispatch, type QueueBatch, type QueueMessage, queueDispatch } from './worker-jobs'

// The Queue consumer of the Worker, fed batches with the shape workers-types gives Message and
// MessageBatch (id, body, attempts, ack, retry; the batch's queue name). The happy path runs for real
// under wrangler dev (test/runtimes/worker.test.ts); these are the paths a local Queue cannot be made
// to take on demand: a delivery that cannot start its job, and the dead-letter queue.

const spec: JobSpec = {
  tenant: 'acme',
  principal: { id: 'key-1', tools: null },
  tool: 'write_file',
  workspace: 'default',
  input: {},
  origin: null,
  callback_url: null,
}

function message(body: unknown, attempts = 1): QueueMessage & { acked: boolean; retried: boolean } {
  return {
    id: crypto.randomUUID(),
    body,
    attempts,
    acked: false,
    retried: false,
    ack() {
      this.acked = true
    },
    retry() {
      this.retried = true
    },
  }
}

function setup(storage: ObjectStore) {
  const store = createJobStore(storage)
  const dispatched: string[] = []
  const runs: string[] = []
  const jobs = createJobRunner({
    store,
    concurrency: 1,
    queueLimit: 10,
    ttlSeconds: 3600,
    run: async (job) => {
      runs.push(job.id)
      return { ok: true }
    },
    describeError: (error) => ({ code: (error as { code?: string }).code, detail: String((error as Error).message) }),
    onFinished: () => undefined,
    log: silentLogger,
    dispatch: async (job) => {
      dispatched.push(job.id)
    },
  })
  const service = { jobs, jobAttempts: 3, deadLetterQueue: 'toolport-jobs-dlq' }
  return { store, jobs, service, runs, dispatched }
}

describe('the Workers job queue consumer', () => {
  it('runs a job once per message, acks it, and a duplicate message runs nothing', async () => {
    const { jobs, service, runs } = setup(createMemoryStorage())
    const job = await jobs.submit(spec)
    const first = message({ toolportJob: { tenant: 'acme', id: job.id } })
    const duplicate = message({ toolportJob: { tenant: 'acme', id: job.id } })
    await consumeJobBatch({ queue: 'toolport-jobs', messages: [first, duplicate] }, service, silentLogger)
    expect(first.acked && duplicate.acked).toBe(true)
    expect(runs).toEqual([job.id])
    expect(await jobs.get('acme', job.id)).toMatchObject({ status: 'succeeded', attempt: 1, max_attempts: 3 })
  })

  it('retries a message whose job could not be started, then runs it as the next attempt', async () => {
    const storage = createMemoryStorage()
    let failing = false
    const flaky: ObjectStore = {
      ...storage,
      async put(key, body, options) {
        if (failing) throw new Error('storage unreachable')
        return storage.put(key, body, options)
      },
    }
    const { jobs, service, runs } = setup(flaky)
    const job = await jobs.submit(spec)
    failing = true
    const first = message({ toolportJob: { tenant: 'acme', id: job.id } }, 1)
    await consumeJobBatch({ queue: 'toolport-jobs', messages: [first] }, service, silentLogger)
    expect(first).toMatchObject({ acked: false, retried: true })
    expect(runs).toEqual([])
    failing = false
    const again = message({ toolportJob: { tenant: 'acme', id: job.id } }, 2)
    await consumeJobBatch({ queue: 'toolport-jobs', messages: [again] }, service, silentLogger)
    expect(again.acked).toBe(true)
    expect(await jobs.get('acme', job.id)).toMatchObject({ status: 'succeeded', attempt: 2 })
  })

  it('fails the job of a dead letter (and leaves a finished one), acking malformed messages', async () => {
    const { jobs, service, runs } = setup(createMemoryStorage())
    const given = await jobs.submit(spec)
    const finished = await jobs.submit(spec)
    await consumeJobBatch(
      { queue: 'toolport-jobs', messages: [message({ toolportJob: { tenant: 'acme', id: finished.id } })] },
      service,
      silentLogger,
    )
    const letters = [
      message({ toolportJob: { tenant: 'acme', id: given.id } }),
      message({ toolportJob: { tenant: 'acme', id: finished.id } }),
      message({ toolportJob: { tenant: '../x', id: 'nope' } }),
      message('not json at all'),
    ]
    const batch: QueueBatch = { queue: 'toolport-jobs-dlq', messages: letters }
    await consumeJobBatch(batch, service, silentLogger)
    expect(letters.every((entry) => entry.acked && !entry.retried)).toBe(true)
    expect(runs).toEqual([finished.id])
    expect(await jobs.get('acme', given.id)).toMatchObject({
      status: 'failed',
      error: { code: 'unavailable', detail: expect.stringContaining('queue gave up on it') },
    })
    expect(await jobs.get('acme', finished.id)).toMatchObject({ status: 'succeeded' })
  })

  it('sends the job address to the Queue, and answers 503 with a hint when none is bound', async () => {
    const sent: unknown[] = []
    await queueDispatch({ send: async (body) => sent.push(body) })({ tenant: 'acme', id: 'j-1' } as never)
    expect(sent).toEqual([{ toolportJob: { tenant: 'acme', id: 'j-1' } }])
    await expect(noQueueDispatch({ tenant: 'acme', id: 'j-2' } as never)).rejects.toMatchObject({
      code: 'unavailable',
      hint: expect.stringContaining('wrangler.toml'),
    })
  })
})
