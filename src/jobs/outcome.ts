import type { Logger } from '../core/logger'
import { describeCause } from '../core/logger'
import type { Heartbeats } from './heartbeats'
import type { JobStore } from './job-store'
import { isUnexpected } from './problem'
import type { JobRecord } from './types'

/** The runner's options that storing and announcing an outcome takes (see JobRunnerOptions). */
interface OutcomeOptions {
  store: JobStore
  describeError(error: unknown): Record<string, unknown>
  onFinished(job: JobRecord): Promise<unknown> | undefined
  log: Logger
}

export interface JobOutcomes {
  /**
   * Waits for the work and stores its outcome. Resolves to the job as stored and whether this run wrote
   * it (false: a cancel came first, or the job is another run's now); undefined when even the failure
   * could not be stored.
   */
  track(job: JobRecord, work: Promise<unknown>): Promise<{ job: JobRecord; wrote: boolean } | undefined>
  trackInProcess(job: JobRecord, work: Promise<unknown>): Promise<void>
  notify(job: JobRecord): Promise<void>
}

/** How a job's work ends up stored and announced; heartbeats is the runner's, so a beat never lands after the outcome. */
export function createJobOutcomes(options: OutcomeOptions, heartbeats: Heartbeats): JobOutcomes {
  const now = () => new Date().toISOString()

  /** Stores the outcome; resolves to the job as stored (the cancelled one if a cancel came first). */
  async function finish(
    job: JobRecord,
    outcome: { result?: unknown; error?: unknown },
  ): Promise<{ job: JobRecord; wrote: boolean }> {
    if ('error' in outcome && isUnexpected(outcome.error)) {
      // A synchronous call's 500 is logged by the error handler; a job's failure has no request to do it.
      options.log.error('job failed unexpectedly', {
        job: job.id,
        tenant: job.tenant,
        tool: job.tool,
        cause: describeCause(outcome.error),
      })
    }
    const finished: JobRecord = {
      ...job,
      finished_at: now(),
      heartbeat_at: null,
      ...('error' in outcome
        ? { status: 'failed' as const, error: options.describeError(outcome.error), result: null }
        : { status: 'succeeded' as const, result: outcome.result, error: null }),
    }
    // A cancel that landed first (here or on another instance) wins; one that comes later finds the job
    // done. So does a later run: once the engine gave the job to another attempt (this instance was
    // taken for dead), this run's outcome is not the job's any more.
    const stored = await options.store.update(job.tenant, job.id, (current) =>
      current?.status === 'running' && sameRun(current, job) ? finished : undefined,
    )
    return { job: stored ?? finished, wrote: stored === finished }
  }

  /** Runs onFinished; never rejects. */
  async function notify(job: JobRecord): Promise<void> {
    try {
      await options.onFinished(job)
    } catch (error) {
      options.log.warn('job notification failed', { job: job.id, cause: String(error) })
    }
  }

  async function track(
    job: JobRecord,
    work: Promise<unknown>,
  ): Promise<{ job: JobRecord; wrote: boolean } | undefined> {
    let outcome: { result: unknown } | { error: unknown }
    try {
      outcome = { result: await work }
    } catch (error) {
      outcome = { error }
    }
    // A heartbeat already under way saves the job as running: it must land before the outcome, not after.
    heartbeats.unwatch(job.id)
    await heartbeats.beating()
    const lost = (saveError: unknown) => {
      options.log.error('job result lost', { job: job.id, cause: String(saveError) })
      return undefined
    }
    try {
      return await finish(job, outcome)
    } catch (error) {
      // The result could not be stored (too large, storage down): store the failure instead.
      return 'error' in outcome ? lost(error) : await finish(job, { error }).catch(lost)
    }
  }

  /** The in-process paths: cancel() already notified for a cancelled job, and nobody waits for webhooks. */
  function trackInProcess(job: JobRecord, work: Promise<unknown>): Promise<void> {
    return track(job, work).then((finished) => {
      if (finished?.wrote) void notify(finished.job)
    })
  }

  return { track, trackInProcess, notify }
}

/** Whether the stored job is still the run `job` started (the same attempt). */
export function sameRun(stored: JobRecord, job: JobRecord): boolean {
  return (stored.attempt ?? 1) === (job.attempt ?? 1)
}
