import { ToolError } from '../core/errors'
import type { Logger } from '../core/logger'
import { deadline } from './deadline'
import { createHeartbeats } from './heartbeats'
import type { JobStore } from './job-store'
import { createJobOutcomes, sameRun } from './outcome'
import { isFinished, type JobRecord } from './types'

export interface JobRunnerOptions {
  store: JobStore
  concurrency: number
  queueLimit: number
  /** Unfinished jobs one tenant may have in this process's queue at once (0: no cap). A dispatch counts its own. */
  perTenantLimit?: number
  ttlSeconds: number
  /** Runs the job's tool; the signal aborts on cancel. */
  run(job: JobRecord, signal: AbortSignal): Promise<unknown>
  /** Turns a failure into the problem document stored with the job. */
  describeError(error: unknown): Record<string, unknown>
  /** Called once a job has finished (webhooks). runStored() awaits what it returns; the local queue does not. */
  onFinished(job: JobRecord): Promise<unknown> | undefined
  log: Logger
  heartbeatMs?: number
  /**
   * Where submitted jobs run. Unset: this process's bounded queue (Node). Set: submit() saves the job
   * as queued and hands it to dispatch, which must bring it to a runStored() call somewhere (on Lambda:
   * an asynchronous invocation of the function itself, so the job gets its own execution environment
   * and the function's full timeout). The local queue, its limit and recover() are then unused.
   */
  dispatch?: JobDispatch
  /**
   * Called once a cancel is stored, so that the instance running the job (maybe another) stops it at
   * once (a fleet engine publishes it; without one the job's heartbeat finds the cancel).
   */
  announceCancel?: (job: JobRecord) => void
}

/** Hands a saved, queued job to whatever will call runStored() for it. Rejects if it could not. */
export type JobDispatch = (job: JobRecord) => Promise<void>

export type JobSpec = Pick<
  JobRecord,
  'tenant' | 'principal' | 'tool' | 'workspace' | 'input' | 'origin' | 'callback_url' | 'trace'
>

export interface RunStoredOptions {
  /** A deadline: when it aborts, the job is killed and fails with the signal's reason. */
  signal?: AbortSignal
  /**
   * The queue engine's count of this delivery (1 for the first). A job left running by an earlier
   * attempt is taken over by a later one at once: the engine only redelivers a job whose worker lost
   * its lock, so no heartbeat has to go stale first, and the earlier run's writes are fenced off.
   */
  attempt?: number
  /** How many deliveries the engine makes at most: stored as max_attempts. */
  maxAttempts?: number
}

export interface JobRunner {
  submit(spec: JobSpec): Promise<JobRecord>
  /**
   * Turns a call already running in this process into a job (a synchronous call that took too long).
   * The call goes on after its HTTP response, so runtimes that freeze once a response is sent (Lambda)
   * must not use it: they run with syncTimeoutMs 0. `startedAt`, when the call began, is the job's
   * created_at and started_at.
   */
  adopt(spec: JobSpec, running: Promise<unknown>, controller: AbortController, startedAt?: Date): Promise<JobRecord>
  /**
   * Runs a dispatched job here, to completion: loads it, and if it is still queued (or was left
   * running by an environment that died), marks it running, executes it with heartbeats and cancel
   * checks, stores the outcome and awaits onFinished. Any other job (finished, cancelled, running
   * elsewhere) is left alone, so a duplicate delivery runs nothing. `signal` is a deadline: when it
   * aborts, the job is killed and fails with the signal's reason. Resolves to the job as stored, or
   * undefined when there is none; rejects only if the job could not be marked running (retry later).
   */
  runStored(tenant: string, id: string, options?: RunStoredOptions): Promise<JobRecord | undefined>
  get(tenant: string, id: string): Promise<JobRecord | undefined>
  cancel(tenant: string, id: string): Promise<JobRecord | undefined>
  /** Aborts the job if it runs in this process: its cancel was stored elsewhere (announceCancel). */
  interrupt(id: string): void
  /**
   * Fails a job its queue engine gave up on (Lambda's on-failure destination: retries exhausted, or the
   * event too old to run): stored as failed with `reason`, unless it finished meanwhile, and its webhook
   * sent. Resolves to the job as stored, or undefined when there is none.
   */
  abandon(tenant: string, id: string, reason: ToolError): Promise<JobRecord | undefined>
  /**
   * Requeues jobs a crashed process left queued or running, and drops expired ones. Does nothing with
   * a dispatch: there a queued job belongs to its own pending invocation, and running it here too
   * would run it twice.
   */
  recover(): Promise<number>
  stop(): void
}

const staleAfterMs = 30_000

/** 429 for a tenant with as many unfinished jobs as it may have (a fleet engine answers the same). */
export function tenantJobLimit(limit: number): ToolError {
  return new ToolError('rate_limited', `You have ${limit} jobs queued or running, the most allowed.`, {
    hint: 'Wait for one to finish (GET /v1/jobs/{id}) or cancel one (DELETE), then submit again.',
    headers: { 'Retry-After': '10' },
  })
}

/**
 * The in-process job runner of a Node instance: a bounded queue in front of `concurrency` workers.
 * State that matters lives in the JobStore; the queue is only this instance's to-do list, rebuilt from
 * storage by recover() after a restart.
 */
export function createJobRunner(options: JobRunnerOptions): JobRunner {
  const queue: JobRecord[] = []
  const heartbeats = createHeartbeats(options.store, options.heartbeatMs ?? 10_000)
  const { running, watch, unwatch } = heartbeats
  const { track, trackInProcess, notify } = createJobOutcomes(options, heartbeats)
  let active = 0
  const now = () => new Date().toISOString()

  function pump() {
    while (active < options.concurrency && queue.length > 0) {
      const job = queue.shift() as JobRecord
      active++
      const controller = new AbortController()
      watch(job.id, { controller, tenant: job.tenant })
      let started: JobRecord | undefined
      // Compare-and-swap from queued: a cancel that landed while the job waited stays, and it never runs.
      void options.store
        .update(job.tenant, job.id, (current) => {
          if (current?.status !== 'queued') return undefined
          started = {
            ...current,
            status: 'running',
            started_at: now(),
            heartbeat_at: now(),
            attempt: 1,
            max_attempts: 1,
          }
          return started
        })
        .then(
          (stored) => {
            if (!started || stored !== started) return unwatch(job.id)
            return trackInProcess(started, options.run(started, controller.signal))
          },
          (error: unknown) => {
            // Still queued in storage: the next recover() (a restart) picks it up.
            unwatch(job.id)
            options.log.error('job could not start', { job: job.id, cause: String(error) })
          },
        )
        .finally(() => {
          active--
          pump()
        })
    }
  }

  function record(spec: JobSpec, status: 'queued' | 'running', created = new Date()): JobRecord {
    return {
      ...spec,
      id: crypto.randomUUID(),
      status,
      created_at: created.toISOString(),
      started_at: status === 'running' ? created.toISOString() : null,
      finished_at: null,
      heartbeat_at: status === 'running' ? now() : null,
      expires_at: new Date(created.getTime() + options.ttlSeconds * 1000).toISOString(),
      progress: null,
      result: null,
      error: null,
    }
  }

  /**
   * Whether a run may start: the job is queued, or left running by a process that died (its heartbeat
   * stale), or the engine delivers it again as a later attempt (it redelivers only a job whose worker
   * lost its lock).
   */
  function startable(job: JobRecord, attempt: number | undefined): boolean {
    if (job.status === 'queued' || isStale(job)) return true
    return job.status === 'running' && attempt !== undefined && (job.attempt ?? 1) < attempt
  }

  function isStale(job: JobRecord): boolean {
    return job.status === 'running' && Date.now() - Date.parse(job.heartbeat_at ?? job.created_at) > staleAfterMs
  }

  return {
    async submit(spec) {
      if (options.dispatch) {
        const job = record(spec, 'queued')
        await options.store.save(job)
        try {
          await options.dispatch(job)
        } catch (error) {
          // Nobody will run it, and the caller never learns its id: drop it and answer 503.
          options.log.error('job dispatch failed', { job: job.id, tenant: job.tenant, cause: String(error) })
          await options.store.remove(job.tenant, job.id).catch(() => {})
          // A dispatch that says why (the queue engine is down, the tenant's cap) is answered as it said it.
          if (error instanceof ToolError && ['unavailable', 'rate_limited'].includes(error.code)) throw error
          throw new ToolError('unavailable', 'The job could not be started.', {
            hint: 'Submit it again in a few seconds.',
            headers: { 'Retry-After': '10' },
          })
        }
        return job
      }
      const perTenant = options.perTenantLimit ?? 0
      if (perTenant > 0) {
        const own =
          queue.filter((job) => job.tenant === spec.tenant).length +
          [...running.values()].filter((entry) => entry.tenant === spec.tenant).length
        if (own >= perTenant) throw tenantJobLimit(perTenant)
      }
      if (queue.length >= options.queueLimit) {
        throw new ToolError('rate_limited', `${options.queueLimit} jobs are already waiting.`, {
          hint: 'Wait for some jobs to finish (Retry-After) and submit again.',
          headers: { 'Retry-After': '10' },
        })
      }
      const job = record(spec, 'queued')
      await options.store.save(job)
      queue.push(job)
      pump()
      return job
    },
    async adopt(spec, work, controller, startedAt) {
      const job = record(spec, 'running', startedAt)
      watch(job.id, { controller, tenant: job.tenant })
      await options.store.save(job)
      void trackInProcess(job, work)
      return job
    },
    async runStored(tenant, id, runOptions = {}) {
      const job = await options.store.load(tenant, id)
      if (!job) return undefined
      if (Date.parse(job.expires_at) < Date.now()) {
        await options.store.remove(tenant, id)
        return undefined
      }
      if (job.status === 'cancelled' && job.started_at === null) {
        // Cancelled before its turn came. With a dispatch, cancel() leaves the webhook to the job's own
        // invocation (the environment that answered DELETE may freeze before delivering it): this one.
        if (options.dispatch) await notify(job)
        return job
      }
      if (!startable(job, runOptions.attempt) || running.has(job.id)) return job
      const controller = new AbortController()
      watch(job.id, { controller, tenant, attempt: runOptions.attempt })
      let started: JobRecord | undefined
      let stored: JobRecord | undefined
      try {
        // Checked again under the lock: a cancel or another delivery may have come since the load.
        stored = await options.store.update(tenant, id, (current) => {
          if (!current || !startable(current, runOptions.attempt)) return undefined
          started = {
            ...current,
            status: 'running',
            started_at: now(),
            heartbeat_at: now(),
            attempt: runOptions.attempt ?? (current.attempt ?? 0) + 1,
            max_attempts: runOptions.maxAttempts ?? current.max_attempts ?? 1,
          }
          return started
        })
      } catch (error) {
        unwatch(job.id)
        throw error
      }
      if (!started || stored !== started) {
        unwatch(job.id)
        return stored
      }
      watch(job.id, { controller, tenant, attempt: started.attempt })
      const limit = runOptions.signal ? deadline(runOptions.signal, controller) : undefined
      const work = options.run(started, controller.signal)
      const finished = await track(started, limit ? Promise.race([work, limit.reached]) : work)
      limit?.clear()
      // A cancel that came from elsewhere was not notified there (see above); it is this invocation's.
      // A job another attempt owns now is that attempt's to announce.
      const ours =
        finished && (finished.wrote || (finished.job.status === 'cancelled' && sameRun(finished.job, started)))
      if (finished && ours && (finished.job.status !== 'cancelled' || options.dispatch)) await notify(finished.job)
      return finished?.job ?? started
    },
    async get(tenant, id) {
      const job = await options.store.load(tenant, id)
      if (!job) return undefined
      if (Date.parse(job.expires_at) < Date.now()) {
        await options.store.remove(tenant, id)
        return undefined
      }
      return job
    },
    async cancel(tenant, id) {
      const job = await this.get(tenant, id)
      if (!job || isFinished(job.status)) return job
      let cancelled: JobRecord | undefined
      // Under the lock: a job that finished since the load keeps its outcome, and the answer says so.
      const stored = await options.store.update(tenant, id, (current) => {
        if (!current || isFinished(current.status)) return undefined
        cancelled = { ...current, status: 'cancelled', finished_at: now(), heartbeat_at: null }
        return cancelled
      })
      if (!cancelled || stored !== cancelled) return stored
      const index = queue.findIndex((queued) => queued.id === id)
      if (index !== -1) queue.splice(index, 1)
      running.get(id)?.controller.abort(new ToolError('conflict', 'The job was cancelled.'))
      options.announceCancel?.(cancelled)
      // With a dispatch the job's own invocation sends the webhook (runStored): the environment that
      // answers this DELETE may be frozen right after, before a delivery could finish.
      if (!options.dispatch) void notify(cancelled)
      return cancelled
    },
    interrupt(id) {
      running.get(id)?.controller.abort(new ToolError('conflict', 'The job was cancelled.'))
    },
    async abandon(tenant, id, reason) {
      let failed: JobRecord | undefined
      const stored = await options.store.update(tenant, id, (current) => {
        if (!current || isFinished(current.status)) return undefined
        failed = {
          ...current,
          status: 'failed',
          finished_at: now(),
          heartbeat_at: null,
          error: options.describeError(reason),
        }
        return failed
      })
      if (failed && stored === failed) await notify(failed)
      return stored
    },
    async recover() {
      if (options.dispatch) return 0
      let requeued = 0
      for (const job of await options.store.all()) {
        if (Date.parse(job.expires_at) < Date.now()) {
          await options.store.remove(job.tenant, job.id)
          continue
        }
        if (
          (job.status === 'queued' || isStale(job)) &&
          !running.has(job.id) &&
          !queue.some((queued) => queued.id === job.id)
        ) {
          queue.push({ ...job, status: 'queued' })
          requeued++
        }
      }
      pump()
      return requeued
    },
    stop() {
      heartbeats.stop()
      for (const { controller } of running.values())
        controller.abort(new ToolError('unavailable', 'The service stopped.'))
    },
  }
}
