import type { ApprovalStore } from '../approvals/store'
import type { Principal } from '../auth/principal'
import { storedFormOf, storedPrincipal } from '../auth/principal'
import type { ToolRegistry } from '../catalog/catalog'
import type { Logger } from '../core/logger'
import type { JobRunner, JobSpec } from '../jobs/runner'
import type { JobRecord } from '../jobs/types'
import type { ObjectStore } from '../storage/store'
import type { ToolServices } from '../tools/services'
import type { ToolLimits } from '../tools/tool'
import { type Admission, type ApprovalGate, approvalNotFound, createApprovalGate } from './approvals'
import type { Call } from './call'
import { invokeTool } from './invoke'
import { type CallJobsDeps, createCallJobs } from './jobs'
import type { CallSettings } from './settings'

export interface CallerDeps {
  registry: ToolRegistry
  storage: ObjectStore
  settings: CallSettings
  services: ToolServices
  log: Logger
  approvals: {
    store: ApprovalStore
    ttlSeconds: number
    publicUrl: string | undefined
    webhook?: { url: string; secret: string | Uint8Array } | undefined
  }
  jobs: Omit<CallJobsDeps, 'execute' | 'storage' | 'log'>
}

export type RunOutcome = { output: unknown } | { job: JobRecord }

export type DecisionOutcome = { rejected: true } | { output: unknown; tool: string }

/**
 * The one call path. Every transport (REST JSON and SSE, MCP, jobs, approvals) hands the caller a
 * Call; the caller owns what a call runs with: the workspace of the principal's tenant, the limits,
 * the deadline (synchronous calls get TOOLPORT_CALL_TIMEOUT_SECONDS unless the tool sets its own; jobs
 * only the tool's), the approval gate, and the hand-off to a job.
 */
export interface Caller {
  readonly registry: ToolRegistry
  readonly jobs: JobRunner
  /** ?dry_run=true and keys that need approval: an answer instead of running the call; undefined: run it. */
  admit(call: Call, options: { dryRun: boolean }): Promise<Admission | undefined>
  /** Runs the call now (SSE, MCP, approved calls): permission, workspace, deadline, output check. */
  invoke(call: Call): Promise<unknown>
  /**
   * Runs the call as REST JSON does: as a job when asked (`async`), otherwise now — and if it outlasts
   * the synchronous limit it goes on as a job, the answer being that job. A disconnect cancels the call
   * only while it is still synchronous.
   */
  run(call: Call, options: { async: boolean; callbackUrl: string | null }): Promise<RunOutcome>
  /** Decides a pending approval; approve runs the stored call once, as the key that asked. */
  decide(
    principal: Principal,
    id: string,
    decision: 'approve' | 'reject',
    request: Pick<Call, 'origin' | 'signal'>,
  ): Promise<DecisionOutcome>
  /** The approver's inbox (GET /v1/approvals) and one card (GET /v1/approvals/{id}). */
  readonly approvals: Pick<ApprovalGate, 'list' | 'show'>
}

export function createCaller(deps: CallerDeps): Caller {
  const { registry, storage, services, log, settings } = deps
  const limits: ToolLimits = { maxFileBytes: settings.maxFileBytes, maxResponseChars: settings.maxResponseChars }
  const syncLimits: ToolLimits = { ...limits, callTimeoutMs: settings.callTimeoutSeconds * 1000 }
  const syncTimeoutMs = settings.syncTimeoutSeconds * 1000

  const invokeWith = (call: Call, callLimits: ToolLimits, own?: AbortController) =>
    invokeTool({
      tool: call.tool,
      input: call.input,
      principal: call.principal,
      workspaceId: call.workspaceId,
      storage,
      limits: callLimits,
      log,
      services,
      // With its own controller the call is aborted through that one: `call.signal` is then never read.
      abort: own ?? call.signal,
      ...(call.emit ? { emit: call.emit } : {}),
      ...(call.origin ? { origin: call.origin } : {}),
      ...(call.inlineImages ? { inlineImages: true } : {}),
      ...(call.admitted ? { admitted: true } : {}),
    })

  const jobs = createCallJobs({
    ...deps.jobs,
    storage,
    log,
    // A job runs without the synchronous deadline: only the tool's own (and the runtime's, on Lambda).
    async execute(job, signal) {
      // By name, as the catalog had it when the job was made: a tool gone since is a not_found failure.
      const tool = await registry.resolve(job.tenant, job.tool)
      return invokeWith(
        {
          tool,
          input: job.input,
          principal: storedPrincipal({ ...job.principal, tenant: job.tenant }),
          workspaceId: job.workspace,
          origin: job.origin ?? undefined,
          signal,
        },
        limits,
      )
    },
  })

  const gate = createApprovalGate({ ...deps.approvals, storage, limits: syncLimits, services })

  const invoke = (call: Call) => invokeWith(call, syncLimits)

  async function run(call: Call, options: { async: boolean; callbackUrl: string | null }): Promise<RunOutcome> {
    if (call.tool.runsInline) return { output: await invoke(call) }
    if (options.async) return { job: await jobs.submit(jobSpec(call, options.callbackUrl)) }
    if (syncTimeoutMs <= 0) return { output: await invoke(call) }
    // The call's own signal: a disconnect cancels it only while it is still a synchronous call.
    const controller = new AbortController()
    let converted = false
    const onDisconnect = () => {
      if (!converted) controller.abort(new Error('client disconnected'))
    }
    const unsubscribe = call.onDisconnect ? call.onDisconnect(onDisconnect) : listen(call.signal, onDisconnect)
    // The deadline aborts this controller itself: one controller per call, not one per layer.
    const startedAt = Date.now()
    const work = invokeWith(call, syncLimits, controller)
    let timer: ReturnType<typeof setTimeout> | undefined
    // Whichever comes first settles the one promise (no Promise.race and its promises per call).
    const outcome = await new Promise<{ output: unknown } | { error: unknown } | 'slow'>((resolve) => {
      timer = setTimeout(() => resolve('slow'), syncTimeoutMs)
      work.then(
        (output) => resolve({ output }),
        (error: unknown) => resolve({ error }),
      )
    })
    clearTimeout(timer)
    if (outcome === 'slow') {
      converted = true
      // The job began with the call, not when it was handed over: created_at and started_at say so.
      return { job: await jobs.adopt(jobSpec(call, options.callbackUrl), work, controller, new Date(startedAt)) }
    }
    unsubscribe()
    if ('error' in outcome) throw outcome.error
    return outcome
  }

  return {
    registry,
    jobs,
    admit: (call, options) => gate.admit(call, options),
    approvals: { list: (principal, options) => gate.list(principal, options), show: (...args) => gate.show(...args) },
    invoke,
    run,
    async decide(principal, id, decision, request) {
      const decided = await gate.decide(principal, id, decision)
      if (decided.kind === 'rejected') return { rejected: true }
      const { record } = decided
      const tool = await registry.resolve(record.tenant, record.tool).catch(() => {
        throw approvalNotFound(id, `The tool ${record.tool} is no longer in this tenant's catalog.`)
      })
      const output = await invoke({
        tool,
        input: record.input,
        principal: decided.principal,
        workspaceId: record.workspace,
        ...request,
      })
      return { output, tool: tool.name }
    },
  }
}

/** Calls `listener` once when `signal` aborts; returns the unsubscribe. */
function listen(signal: AbortSignal, listener: () => void): () => void {
  signal.addEventListener('abort', listener, { once: true })
  return () => signal.removeEventListener('abort', listener)
}

/** What a job keeps of a call: enough to run it later, anywhere, as the key that asked. */
function jobSpec(call: Call, callbackUrl: string | null): JobSpec {
  return {
    tenant: call.principal.tenant,
    principal: storedFormOf(call.principal),
    tool: call.tool.name,
    workspace: call.workspaceId,
    input: call.input,
    origin: call.origin ?? null,
    callback_url: callbackUrl,
  }
}
