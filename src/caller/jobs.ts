import type { Config } from '../config/config'
import { deliverCallback } from '../jobs/callback'
import { createJobStore } from '../jobs/job-store'
import { createJobRunner, errorToProblem, type JobDispatch, type JobRunner } from '../jobs/runner'
import { publicJob } from '../jobs/types'
import type { ObjectStore } from '../storage/store'
import type { ToolServices } from '../tools/services'
import type { Logger, Tool } from '../tools/tool'
import { invokeTool } from './invoke'

export interface AppJobRunnerDeps {
  config: Config
  storage: ObjectStore
  log: Logger
  tools: readonly Tool[]
  services: ToolServices
  /** HMAC key of webhook signatures (the same secret as download links). */
  secret: string | Uint8Array
  /**
   * Unset: jobs run in this process's queue. Set (Lambda): each job goes to its own invocation, which
   * calls runStored(); nothing is recovered at start, since a queued job belongs to its invocation.
   */
  dispatch?: JobDispatch
}

/** The job runner of one app: runs jobs through invokeTool, exactly like a synchronous call. */
export function createAppJobRunner(deps: AppJobRunnerDeps): JobRunner {
  const { config, storage, log, services } = deps
  const toolsByName = new Map(deps.tools.map((tool) => [tool.name, tool]))
  const limits = { maxFileBytes: config.maxFileBytes, maxResponseChars: config.maxResponseChars }
  const runner = createJobRunner({
    store: createJobStore(storage),
    concurrency: config.jobs.concurrency,
    queueLimit: config.jobs.queue,
    ttlSeconds: config.jobs.ttlSeconds,
    log,
    ...(deps.dispatch ? { dispatch: deps.dispatch } : {}),
    describeError: errorToProblem,
    async execute(job, signal) {
      const tool = toolsByName.get(job.tool)
      if (!tool) throw new Error(`tool ${job.tool} is not enabled here`)
      return invokeTool({
        tool,
        input: job.input,
        principal: {
          id: job.principal.id,
          tenant: job.tenant,
          tools: job.principal.tools ? new Set(job.principal.tools) : undefined,
          // A job exists only for a call that needed no approval or already has it (routes/tools.ts).
          requireApproval: new Set(),
          approver: false,
        },
        workspaceId: job.workspace,
        storage,
        limits,
        log,
        services,
        signal,
        ...(job.origin ? { origin: job.origin } : {}),
      })
    },
    // The delivery promise: runStored() waits for it (an invocation must not end before its webhook).
    async onFinished(job) {
      const http = services.http
      if (!job.callback_url || !http) return
      const statusUrl = `${config.links.publicUrl ?? job.origin ?? config.publicUrl}/v1/jobs/${job.id}`
      await deliverCallback(job.callback_url, publicJob(job, statusUrl), {
        http,
        secret: deps.secret,
        attempts: config.jobs.callbackAttempts,
        backoffMs: config.jobs.callbackBackoffMs,
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
