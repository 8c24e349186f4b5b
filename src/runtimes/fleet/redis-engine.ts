import { Queue, Worker } from 'bullmq'
import { Redis, type RedisOptions } from 'ioredis'
import type { SessionRegistry } from '../../browser/session/registry'
import type { FleetSettings } from '../../config/fleet-settings'
import { ToolError } from '../../core/errors'
import type { Logger } from '../../core/logger'
import type { RateLimiter } from '../../http/middleware/rate-limit'
import type { Delivery } from '../../jobs/callback'
import { type JobDispatch, type JobRunner, tenantJobLimit } from '../../jobs/runner'
import type { JobRecord } from '../../jobs/types'
import { createRedisJobSlots } from './redis-job-slots'
import { createRedisRateLimiter } from './redis-rate-limit'
import { createRedisSessionRegistry } from './redis-session-registry'
import { withinMs } from './within'

/**
 * The Node fleet engine on Redis (TOOLPORT_REDIS_URL): what storage is bad at, carried by Redis and
 * well-kept libraries instead of code of ours.
 * - Jobs on BullMQ: every instance runs a Worker; one takes each job. A dead instance's job lock lapses
 *   (lockDuration) and BullMQ's stalled check hands the job to another worker as the next attempt; the
 *   job record in the bucket stays the truth (results, status), fenced by attempt.
 * - Cancels are published: the instance running the job aborts it at once, not at its next heartbeat.
 * - Catalog changes are published: every instance re-reads the tenant's sources at once.
 * - Rate limits on Redis counters (rate-limiter-flexible), with an in-memory fallback while Redis is down.
 * - Browser sessions: instance liveness and each tenant's sessions, counted fleet-wide.
 * The bucket keeps all state that must survive; Redis losing its data loses queued work at most (the
 * records then say queued until their TTL).
 */
export interface RedisEngine {
  readonly dispatch: JobDispatch
  /** Queues a webhook delivery: any instance's worker sends it, retrying with backoff. */
  deliver(delivery: Delivery): Promise<void>
  /**
   * Starts this instance's BullMQ workers: jobs through the runner's runStored, webhook deliveries
   * through `send` (one POST; false or a throw is retried).
   */
  startWorker(runner: JobRunner, send: (delivery: Delivery, tryNumber: number) => Promise<boolean>): void
  /** Tells every instance that a job was cancelled, so the one running it stops within a moment. */
  announceCancel(job: JobRecord): void
  /** Tells every instance that a tenant's sources changed (undefined: the operator's). */
  announceCatalogChange(tenant: string | undefined): void
  onCatalogChange(listener: (tenant: string | undefined) => void): void
  rateLimiter(limit: { count: number; windowSeconds: number }): RateLimiter
  /** Browser sessions across the fleet: instance liveness and per-tenant counts. */
  readonly sessions: SessionRegistry
  close(): Promise<void>
}

/** How long a worker holds a job's lock between renewals: a dead instance's job moves on after about this. */
const lockDurationMs = 10_000
/** How often workers look for jobs whose lock lapsed. */
const stalledIntervalMs = 5_000

interface JobMessage {
  tenant: string
  id: string
}

export function createRedisEngine(
  settings: FleetSettings & {
    redisUrl: string
    callbackAttempts: number
    callbackBackoffMs: number
    /** TOOLPORT_JOBS_PER_TENANT (0: no cap), counted fleet-wide. */
    jobsPerTenant: number
    jobTtlSeconds: number
  },
  options: { log: Logger; concurrency: number },
): RedisEngine {
  const { log } = options
  const prefix = settings.redisPrefix
  const channel = { cancel: `${prefix}:cancel`, catalog: `${prefix}:catalog` }
  // A submission fails at once while Redis is down (a 503 to the caller): checked before and bounded in
  // time, since BullMQ needs the client's offline queue for its own start-up (its INFO is sent before
  // the connection is ready). Workers and subscribers wait and reconnect by themselves.
  const producer = connect(settings.redisUrl, { maxRetriesPerRequest: 1 }, log, 'producer')
  const subscriber = connect(settings.redisUrl, { maxRetriesPerRequest: null }, log, 'subscriber')
  const queue = new Queue<JobMessage>('jobs', { connection: producer, prefix, skipWaitingForReady: true })
  queue.on('error', (error) => log.warn('redis job queue error', { cause: String(error) }))
  const webhooks = new Queue<Delivery>('webhooks', { connection: producer, prefix, skipWaitingForReady: true })
  webhooks.on('error', (error) => log.warn('redis webhook queue error', { cause: String(error) }))
  const workers: Worker[] = []
  const sessions = createRedisSessionRegistry(producer, prefix, log, dispatchTimeoutMs)
  const slots = createRedisJobSlots(producer, prefix, settings.jobTtlSeconds * 1000, dispatchTimeoutMs)
  const release = (tenant: string, id: string) =>
    slots.release(tenant, id).catch((error: unknown) => {
      // The slot lapses with the job's TTL.
      log.warn('job slot not released', { job: id, tenant, cause: String(error) })
    })
  let runner: JobRunner | undefined
  const catalogListeners: Array<(tenant: string | undefined) => void> = []

  void subscriber.subscribe(channel.cancel, channel.catalog).catch((error: unknown) => {
    log.warn('redis subscribe failed', { cause: String(error) })
  })
  subscriber.on('message', (from: string, message: string) => {
    try {
      const body = JSON.parse(message) as { tenant?: string; id?: string }
      if (from === channel.cancel && body.tenant && body.id) runner?.interrupt(body.id)
      if (from === channel.catalog) for (const listener of catalogListeners) listener(body.tenant)
    } catch {
      // Not one of ours: ignored.
    }
  })

  const publish = (to: string, body: unknown) =>
    producer.publish(to, JSON.stringify(body)).catch((error: unknown) => {
      // The poll (the slow fallback) still brings the change; a cancel still lands at the next heartbeat.
      log.warn('redis publish failed', { channel: to, cause: String(error) })
    })

  return {
    async dispatch(job) {
      let claimed = false
      try {
        if (producer.status !== 'ready') throw new Error(`redis connection is ${producer.status}`)
        if (settings.jobsPerTenant > 0) {
          if (!(await slots.claim(job.tenant, job.id, settings.jobsPerTenant))) {
            throw tenantJobLimit(settings.jobsPerTenant)
          }
          claimed = true
        }
        await withinMs(
          dispatchTimeoutMs,
          queue.add(
            'job',
            { tenant: job.tenant, id: job.id },
            {
              jobId: job.id,
              // A delivery that could not even mark the job running (storage down) is tried again.
              attempts: settings.jobAttempts,
              backoff: { type: 'exponential', delay: 1_000 },
              removeOnComplete: { age: 3_600 },
              removeOnFail: { age: 86_400 },
            },
          ),
        )
      } catch (error) {
        if (error instanceof ToolError) throw error
        if (claimed) void release(job.tenant, job.id)
        throw new ToolError('unavailable', 'The job queue (Redis) is unreachable, so the job was not started.', {
          hint: 'Synchronous calls still work. Submit the job again in a few seconds; the operator can check TOOLPORT_REDIS_URL.',
          headers: { 'Retry-After': '5' },
          cause: error,
        })
      }
    },
    async deliver(delivery) {
      // The delivery id is the BullMQ job id: the same delivery queued twice (a duplicate onFinished)
      // is one delivery.
      await withinMs(
        dispatchTimeoutMs,
        webhooks.add('webhook', delivery, {
          jobId: delivery.id,
          attempts: settings.callbackAttempts,
          backoff: { type: 'exponential', delay: settings.callbackBackoffMs },
          removeOnComplete: { age: 86_400 },
          removeOnFail: { age: 7 * 86_400 },
        }),
      )
    },
    startWorker(jobs, send) {
      runner = jobs
      const connection = connect(settings.redisUrl, { maxRetriesPerRequest: null }, log, 'worker')
      const worker = new Worker<JobMessage>(
        'jobs',
        async (job) => {
          await jobs.runStored(job.data.tenant, job.data.id, {
            attempt: job.attemptsStarted,
            maxAttempts: settings.jobAttempts,
          })
          // Finished, or not ours to run (cancelled, done already): the tenant's slot is free.
          if (settings.jobsPerTenant > 0) await release(job.data.tenant, job.data.id)
        },
        {
          connection,
          prefix,
          concurrency: options.concurrency,
          lockDuration: lockDurationMs,
          stalledInterval: stalledIntervalMs,
          // A job is started at most jobAttempts times, whether its runs failed or their instances died.
          maxStalledCount: Math.max(0, settings.jobAttempts - 1),
        },
      )
      worker.on('error', (error) => log.warn('redis job worker error', { cause: String(error) }))
      worker.on('failed', (job, error) => {
        if (!job) return
        log.warn('job delivery failed', { job: job.data.id, attempt: job.attemptsStarted, cause: String(error) })
        // No attempt is left (runs failed, or instances died under it): the engine gives up on it.
        const last = job.attemptsMade >= settings.jobAttempts || /stalled more than/.test(String(error))
        if (last && settings.jobsPerTenant > 0) void release(job.data.tenant, job.data.id)
      })
      const sender = new Worker<Delivery>(
        'webhooks',
        async (job) => {
          if (!(await send(job.data, job.attemptsMade + 1))) throw new Error('the receiver did not answer 2xx')
        },
        { connection: connection.duplicate(), prefix, concurrency: 4 },
      )
      sender.on('error', (error) => log.warn('redis webhook worker error', { cause: String(error) }))
      sender.on('failed', (job, error) => {
        if (job && job.attemptsMade >= settings.callbackAttempts) {
          log.warn('job callback not delivered', { delivery: job.data.id, cause: String(error) })
        }
      })
      workers.push(worker, sender)
    },
    announceCancel(job) {
      void publish(channel.cancel, { tenant: job.tenant, id: job.id })
    },
    announceCatalogChange(tenant) {
      void publish(channel.catalog, { tenant: tenant ?? null })
    },
    onCatalogChange(listener) {
      catalogListeners.push(listener)
    },
    rateLimiter: (limit) => createRedisRateLimiter(producer, `${prefix}:rate`, limit),
    sessions,
    async close() {
      for (const worker of workers) await worker.close().catch(() => {})
      await queue.close().catch(() => {})
      await webhooks.close().catch(() => {})
      sessions.leave()
      subscriber.disconnect()
      producer.disconnect()
    },
  }
}

/** How long a submission waits for Redis before answering 503. */
const dispatchTimeoutMs = 3_000

function connect(url: string, options: RedisOptions, log: Logger, role: string): Redis {
  const client = new Redis(url, {
    ...options,
    // Reconnects by itself, backing off to 2 s, for as long as the process runs.
    retryStrategy: (times) => Math.min(2_000, 100 * times),
  })
  let down = false
  client.on('error', (error) => {
    if (!down) log.warn('redis unreachable', { role, cause: String(error) })
    down = true
  })
  client.on('ready', () => {
    if (down) log.info('redis reachable again', { role })
    down = false
  })
  return client
}
