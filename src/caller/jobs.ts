import { storedFormOf } from '../auth/principal'
import type { Logger } from '../core/logger'
import { type Delivery, deliverCallback, deliveryOf } from '../jobs/callback'
import { createJobStore } from '../jobs/job-store'
import { errorToProblem } from '../jobs/problem'
import { createJobRunner, type JobDispatch, type JobRunner, type JobSpec } from '../jobs/runner'
import type { JobSettings } from '../jobs/settings'
import { type JobRecord, jobStatusUrl, publicJob } from '../jobs/types'
import type { HttpClient } from '../net/http'
import type { ObjectStore } from '../storage/store'
import type { Call } from './call'

export interface CallJobsDeps {
  settings: JobSettings
  storage: ObjectStore
  log: Logger
  /** The outbound client for callbacks; unset: callbacks are not sent. */
  http: HttpClient | undefined
  /** HMAC key of webhook signatures (the same secret as download links). */
  secret: string | Uint8Array
  /** Origin of status_url in callbacks, for a job without a recorded origin: the public URL. */
  statusOrigin(job: JobRecord): string
  /** Runs a job's call; the signal aborts on cancel (or at a Lambda invocation's deadline). */
  run(job: JobRecord, signal: AbortSignal): Promise<unknown>
  /**
   * Unset: jobs run in this process's queue. Set (Lambda): each job goes to its own invocation, which
   * calls runStored(); nothing is recovered at start, since a queued job belongs to its invocation.
   */
  dispatch?: JobDispatch | undefined
  /**
   * A fleet engine's queue of webhook deliveries: it retries with backoff on any instance, so a delivery
   * survives the instance that made it. Unset: delivered from this process, retrying in memory.
   */
  deliver?: ((delivery: Delivery) => Promise<void>) | undefined
  /** A fleet engine's broadcast of stored cancels (JobRunnerOptions.announceCancel). */
  announceCancel?: ((job: JobRecord) => void) | undefined
}

/** The job runner of one app: its jobs run through the caller, exactly like a synchronous call. */
export function createCallJobs(deps: CallJobsDeps): JobRunner {
  const { settings, storage, log } = deps
  const runner = createJobRunner({
    store: createJobStore(storage),
    concurrency: settings.concurrency,
    queueLimit: settings.queue,
    perTenantLimit: settings.perTenant,
    ttlSeconds: settings.ttlSeconds,
    log,
    ...(deps.dispatch ? { dispatch: deps.dispatch } : {}),
    ...(deps.announceCancel ? { announceCancel: deps.announceCancel } : {}),
    describeError: errorToProblem,
    run: deps.run,
    // The delivery promise: runStored() waits for it (an invocation must not end before its webhook).
    async onFinished(job) {
      const http = deps.http
      if (!job.callback_url || !http) return
      const statusUrl = jobStatusUrl(deps.statusOrigin(job), job.id)
      const delivery = deliveryOf(job, job.callback_url, publicJob(job, statusUrl))
      if (deps.deliver) {
        await deps.deliver(delivery).catch((error: unknown) => {
          log.warn('job callback not queued', { job: job.id, tenant: job.tenant, cause: String(error) })
        })
        return
      }
      await deliverCallback(delivery, {
        http,
        secret: deps.secret,
        attempts: settings.callbackAttempts,
        backoffMs: settings.callbackBackoffMs,
      }).then((delivered) => {
        if (!delivered) log.warn('job callback not delivered', { job: job.id, tenant: job.tenant })
      })
    },
  })
  // Jobs a previous process left behind (queued, or running when it died) start again here. Not with a
  // dispatch (Lambda): every queued job has an invocation of its own on the way, and a cold start
  // that ran them too would run them twice (and list the whole bucket on every cold start).
  if (!deps.dispatch) {
    void runner.recover().catch((error: unknown) => log.warn('job recovery failed', { cause: String(error) }))
  }
  return runner
}

/** What a job keeps of a call: enough to run it later, anywhere, as the key that asked. */
export function jobSpec(call: Call, callbackUrl: string | null, trace?: JobSpec['trace']): JobSpec {
  return {
    ...(trace?.traceparent ? { trace } : {}),
    tenant: call.principal.tenant,
    principal: storedFormOf(call.principal),
    tool: call.entry.name,
    workspace: call.workspaceId,
    input: call.input,
    origin: call.origin ?? null,
    callback_url: callbackUrl,
  }
}
