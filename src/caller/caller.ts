import type { ApprovalStore } from '../approvals/store'
import { assertToolAllowed, type Principal, type StoredPrincipal, storedPrincipal } from '../auth/principal'
import type { Catalog } from '../catalog/catalog'
import type { CatalogEntry } from '../catalog/entry'
import { type Audit, type AuditEvent, noAudit, traceIdOf } from '../core/audit'
import { isToolError, statusOf, ToolError } from '../core/errors'
import type { Logger } from '../core/logger'
import { noTracing, type SpanAttributes, type TraceCarrier, type TraceSpan, type Tracing } from '../core/tracing'
import { type CallAccount, noUsage, type UsageMeter } from '../core/usage'
import { type JobAccess, jobAccess } from '../jobs/access'
import type { JobRunner } from '../jobs/runner'
import type { JobRecord } from '../jobs/types'
import type { ObjectStore } from '../storage/store'
import type { ToolServices } from '../tools/services'
import type { ToolLimits } from '../tools/tool'
import {
  type ApprovalGate,
  approvalNotFound,
  createApprovalGate,
  type GateAnswer,
  needsApproval,
  type PendingApproval,
} from './approvals'
import type { AdmittedCall, Call, CallRequest, Disconnect, RunOptions } from './call'
import { disconnectOf } from './call'
import { parseInput } from './input'
import { type CallJobsDeps, createCallJobs, jobSpec } from './jobs'
import { createToolRunner } from './run-tool'
import type { CallSettings } from './settings'

export interface CallerDeps {
  catalog: Catalog
  storage: ObjectStore
  settings: CallSettings
  /** What the deployment lends its tools; each tool gets the ones it declares. The jobs are the caller's own. */
  services: Omit<ToolServices, 'jobs'>
  log: Logger
  approvals: {
    store: ApprovalStore
    ttlSeconds: number
    publicUrl: string | undefined
    webhook?: { url: string; secret: string | Uint8Array } | undefined
  }
  jobs: Omit<CallJobsDeps, 'run' | 'storage' | 'log'>
  /** One span per call (runtimes/otel-tracing.ts); default: off. */
  tracing?: Tracing
  /** The audit log (audit/audit-log.ts): refusals and approvals are told here; default: off. */
  audit?: Audit
  /** Put a refused or gated call's input in its audit record (TOOLPORT_AUDIT_INPUTS). */
  auditInputs?: boolean
  /** Usage per tenant (usage/usage-meter.ts): every call's tool, outcome and seconds; default: off. */
  usage?: UsageMeter
}

/** What admit answers: the admitted call to run, or an answer instead of running it. */
export type Admission = Exclude<GateAnswer, { kind: 'run' }> | { kind: 'run'; call: AdmittedCall }

export type RunOutcome = { output: unknown } | { job: JobRecord }

export type DecisionOutcome = { rejected: true } | { output: unknown; tool: string }

export type { PendingApproval }

/**
 * The one call path. Every transport (REST JSON and SSE, MCP, jobs, approvals) decodes its request
 * into prepare's arguments and encodes what run answers; the caller does everything between, once:
 * finds the tool in the tenant's catalog, checks the key's scope, parses the input, decides whether
 * an approver must see the call (admit), and runs it with its workspace, limits, deadline, the
 * services its tool declares and the hand-off to a job.
 */
export interface Caller {
  /**
   * Finds the tool, checks the key may call it, reads and parses the input (the nulls strict platforms
   * send for unset optional fields dropped, then the tool's own schema), and decides whether the key's
   * policy gates it. Throws not_found, permission_denied or validation.
   */
  prepare(request: CallRequest): Promise<Call>
  /**
   * Whether the principal may call the tool it names, checked before a transport commits to an answer
   * (MCP's scope challenge is an HTTP 403, not a tool error). Throws not_found or permission_denied.
   */
  assertAllowed(principal: Principal, tool: string): Promise<void>
  /**
   * ?dry_run=true answers the call's preview; a call the key's policy gates is stored for an approver
   * and answered pending (unless its dry run shows it changes nothing); any other call is admitted.
   */
  admit(call: Call, options?: { dryRun?: boolean }): Promise<Admission>
  /** Runs an admitted call as the transport asks (RunOptions.mode): its output, or the job it became. */
  run(call: AdmittedCall, options?: RunOptions): Promise<RunOutcome>
  /** Decides a pending approval; approve runs the stored call once, as the key that asked. */
  decide(
    principal: Principal,
    id: string,
    decision: 'approve' | 'reject',
    request: { origin: string | undefined; disconnect: Disconnect | undefined; requestId?: string | undefined },
  ): Promise<DecisionOutcome>
  /** Whether this key's calls of the tool wait for an approver (MCP's tools/list says so). */
  needsApproval(principal: Principal, entry: CatalogEntry): boolean
  /** The approver's inbox (GET /v1/approvals) and one card (GET /v1/approvals/{id}). */
  readonly approvals: Pick<ApprovalGate, 'list' | 'show'>
  /** The jobs calls become (the runtime drives them: Lambda's job invocations, recovery at start). */
  readonly jobs: JobRunner
  /** The jobs as a key may see them: REST /v1/jobs, MCP tasks and the job tools alike. */
  readonly jobAccess: JobAccess
}

/** A call as a job or an approval keeps it: enough to run it later, anywhere, as the key that asked. */
interface StoredCall {
  tenant: string
  principal: StoredPrincipal
  tool: string
  workspace: string
  input: unknown
  origin: string | null | undefined
  trace?: TraceCarrier | null | undefined
}

export function createCaller(deps: CallerDeps): Caller {
  const { catalog, storage, log, settings } = deps
  const tracing = deps.tracing ?? noTracing
  const audit = deps.audit ?? noAudit
  const usage = deps.usage ?? noUsage
  const accounting = audit.enabled || usage.enabled
  const limits: ToolLimits = { maxFileBytes: settings.maxFileBytes, maxResponseChars: settings.maxResponseChars }
  // Synchronous calls get TOOLPORT_CALL_TIMEOUT_SECONDS unless the tool sets its own; jobs only the tool's.
  const syncLimits: ToolLimits = { ...limits, callTimeoutMs: settings.callTimeoutSeconds * 1000 }
  const syncTimeoutMs = settings.syncTimeoutSeconds * 1000
  // Calls admit made: run takes no other, so no transport can skip the approval gate.
  const admitted = new WeakSet<Call>()
  const admit = (call: Call) => {
    admitted.add(call)
    return call as AdmittedCall
  }

  /** The span of one tool call, named and attributed after OpenTelemetry's GenAI conventions. */
  function callSpan(call: Call, more: SpanAttributes = {}): TraceSpan {
    if (!tracing.enabled) return tracing.start('', {})
    return tracing.start(`execute_tool ${call.entry.name}`, {
      kind: 'internal',
      parent: call.trace,
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': call.entry.name,
        'gen_ai.tool.type': call.entry.source === undefined ? 'function' : 'extension',
        'gen_ai.tool.call.id': call.callId,
        'toolport.tool.id': call.entry.id,
        'toolport.tool.effect': call.entry.tool.effect,
        'toolport.tenant': call.principal.tenant,
        'toolport.workspace': call.workspaceId,
        ...more,
      },
    })
  }

  const jobs = createCallJobs({
    ...deps.jobs,
    storage,
    log,
    // A job runs without the synchronous deadline: only the tool's own (and the runtime's, on Lambda).
    async run(job, signal) {
      const call = await restore(job)
      const controller = new AbortController()
      const unsubscribe = disconnectOf(signal)((reason) => controller.abort(reason))
      // The job's run is a span of the trace of the call that made it, wherever it runs.
      const span = callSpan(call, { 'toolport.job.id': job.id, 'toolport.job.attempt': job.attempt ?? 1 })
      try {
        const account = accountOf(call, span)
        const work = tools.run(call, limits, controller, { span, ...(account ? { account: account.account } : {}) })
        return await traced(span, metered(call, span, account, work))
      } finally {
        unsubscribe()
      }
    },
  })
  const access = jobAccess(jobs)
  const tools = createToolRunner({ storage, log, services: { ...deps.services, jobs: access } })
  const gate = createApprovalGate({
    ...deps.approvals,
    onExpired: (record) =>
      audit.record({
        tenant: record.tenant,
        principal: 'system',
        action: 'approval.expired',
        target: record.id,
        outcome: 'expired',
        traceId: traceIdOf(record.trace?.traceparent),
        details: { tool: record.tool, asked_by: record.principal.id, expires_at: record.expires_at },
      }),
    limits: syncLimits,
    http: deps.services.http,
    dryRunContext: (call) => tools.dryRunContext(call, syncLimits),
  })

  /** The tool the key's tenant holds under this name (not_found), if the key may call it (permission_denied). */
  async function allowedTool(principal: Principal, name: string): Promise<CatalogEntry> {
    const entry = await catalog.resolve(principal.tenant, name)
    assertToolAllowed(principal, entry)
    return entry
  }

  /** The audit record of a call refused for scope, approval, policy or a connection (the error says which). */
  async function auditRefusal(
    principal: Principal,
    tool: string,
    error: unknown,
    facts: { entry?: CatalogEntry; requestId?: string | undefined; traceId?: string | undefined; input?: unknown },
  ): Promise<void> {
    if (!audit.enabled || !isToolError(error) || !error.refusal) return
    const { kind, target } = error.refusal
    const uses = facts.entry?.tool.uses ?? []
    const page = uses.includes('browser') || uses.includes('browserSessions')
    const event: AuditEvent = {
      tenant: principal.tenant,
      principal: principal.id,
      action: kind === 'connection' ? (page ? 'page.refused' : 'egress.refused') : 'call.refused',
      target: kind === 'connection' ? target : tool,
      outcome: 'refused',
      requestId: facts.requestId,
      traceId: facts.traceId,
      details: {
        reason: kind,
        tool,
        ...(kind !== 'connection' && target !== undefined && target !== tool ? { refused: target } : {}),
        message: error.message.slice(0, 300),
        ...(deps.auditInputs && facts.input !== undefined ? { input: inputText(facts.input) } : {}),
      },
    }
    await audit.record(event)
  }

  /**
   * What a running call's tool tells of its use and refusals, bound to its tenant; its audit records are
   * kept before the call answers (settle).
   */
  function accountOf(call: Call, span: TraceSpan): { account: CallAccount; settle(): Promise<void> } | undefined {
    if (!accounting) return undefined
    const tenant = call.principal.tenant
    const pending: Promise<void>[] = []
    const account: CallAccount = {
      used: (facts) => usage.add(tenant, facts),
      refused(kind, target, reason) {
        // A command can try thousands of hosts: the first 20 refusals of a call are each a record.
        if (pending.length >= 20) return
        pending.push(
          audit.record({
            tenant,
            principal: call.principal.id,
            action: kind === 'page' ? 'page.refused' : 'egress.refused',
            target,
            outcome: 'refused',
            requestId: call.requestId,
            traceId: traceOf(call, span),
            details: { tool: call.entry.name, reason: reason.slice(0, 300) },
          }),
        )
      },
    }
    return { account, settle: async () => void (await Promise.all(pending)) }
  }

  /** Counts the call (tool, outcome, seconds) and keeps what it refused, once it settles. */
  function metered<T>(
    call: Call,
    span: TraceSpan,
    account: { settle(): Promise<void> } | undefined,
    work: Promise<T>,
  ): Promise<T> {
    if (!account) return work
    const started = performance.now()
    const tenant = call.principal.tenant
    return work.then(
      async (output) => {
        usage.call(tenant, call.entry.name, 'ok', (performance.now() - started) / 1000)
        await account.settle()
        return output
      },
      async (error: unknown) => {
        usage.call(
          tenant,
          call.entry.name,
          isToolError(error) ? error.code : 'internal',
          (performance.now() - started) / 1000,
        )
        await account.settle()
        await auditRefusal(call.principal, call.entry.name, error, {
          entry: call.entry,
          requestId: call.requestId,
          traceId: traceOf(call, span),
          input: call.input,
        })
        throw error
      },
    )
  }

  /** The stored call as the key that asked: found by name again (a tool gone since is not_found), its scope checked again. */
  async function restore(stored: StoredCall): Promise<AdmittedCall> {
    const principal = storedPrincipal({ ...stored.principal, tenant: stored.tenant })
    const entry = await allowedTool(principal, stored.tool)
    // Its input was parsed when the call was made; it needs no approval (it has one, or never needed one).
    return admit({
      entry,
      input: stored.input,
      principal,
      workspaceId: stored.workspace,
      origin: stored.origin ?? undefined,
      inlineImages: false,
      needsApproval: false,
      ...(stored.trace ? { trace: stored.trace } : {}),
    })
  }

  async function run(call: AdmittedCall, options: RunOptions = {}): Promise<RunOutcome> {
    if (!admitted.has(call)) {
      throw await refusedBy(
        call,
        new ToolError('permission_denied', `This key needs an approval to call ${call.entry.name}.`, {
          hint: `Call POST /v1/tools/${call.entry.name}: it answers 202 pending_approval, and POST /v1/approvals/{id} runs the call.`,
          refusal: { kind: 'approval', target: call.entry.name },
        }),
      )
    }
    const asked = options.mode ?? 'sync'
    // A source's tool is bounded by its source's timeout: a synchronous call of it ends there (504)
    // instead of becoming a job its caller never asked for (?async=true and MCP tasks make one).
    const sourceSync = asked === 'sync' && call.entry.source !== undefined && !options.sourceHandOver
    const mode = call.entry.runsInline || sourceSync ? 'now' : asked
    const span = callSpan(call)
    if (mode === 'job') {
      // The hand-off is this call's span; the job's run is its child, whichever instance runs it.
      try {
        const job = await jobs.submit(jobSpec(call, options.callbackUrl ?? null, span.carrier()))
        span.setAttributes({ 'toolport.job.id': job.id, 'toolport.outcome': 'job' })
        return { job }
      } catch (error) {
        failSpan(span, error)
        throw error
      } finally {
        span.end()
      }
    }
    // The call's own controller: the deadline and a disconnect abort it, and nothing else does.
    const controller = new AbortController()
    let handedOver = false
    const unsubscribe = options.disconnect?.((reason) => {
      // A disconnect cancels the call only while it is still the client's, not once it went on as a job.
      if (!handedOver) controller.abort(reason ?? new Error('client disconnected'))
    })
    const startedAt = Date.now()
    const account = accountOf(call, span)
    // Ended when the work settles, which is after a hand-over for a call that went on as a job.
    const work = traced(
      span,
      metered(
        call,
        span,
        account,
        tools.run(call, syncLimits, controller, {
          emit: options.emit,
          client: options.client,
          span,
          ...(account ? { account: account.account } : {}),
        }),
      ),
    )
    if (mode === 'now' || syncTimeoutMs <= 0) {
      try {
        return { output: await work }
      } finally {
        unsubscribe?.()
      }
    }
    let timer: ReturnType<typeof setTimeout> | undefined
    // Whichever comes first settles the one promise, as runWithDeadline does (see its measurement).
    const outcome = await new Promise<{ output: unknown } | { error: unknown } | 'slow'>((resolve) => {
      timer = setTimeout(() => resolve('slow'), syncTimeoutMs)
      work.then(
        (output) => resolve({ output }),
        (error: unknown) => resolve({ error }),
      )
    })
    clearTimeout(timer)
    if (outcome === 'slow') {
      handedOver = true
      // The job began with the call, not when it was handed over: created_at and started_at say so.
      const spec = jobSpec(call, options.callbackUrl ?? null, span.carrier())
      return { job: await jobs.adopt(spec, work, controller, new Date(startedAt)) }
    }
    unsubscribe?.()
    if ('error' in outcome) throw outcome.error
    return outcome
  }

  async function refusedBy(call: Call, error: ToolError): Promise<ToolError> {
    await auditRefusal(call.principal, call.entry.name, error, {
      entry: call.entry,
      requestId: call.requestId,
      traceId: traceIdOf(call.trace?.traceparent),
    })
    return error
  }

  return {
    async assertAllowed(principal, tool) {
      await allowedTool(principal, tool)
    },
    async prepare(request) {
      const { principal } = request
      const entry = await allowedTool(principal, request.tool).catch(async (error: unknown) => {
        await auditRefusal(principal, request.tool, error, {
          requestId: request.requestId,
          traceId: traceIdOf(request.trace?.traceparent),
        })
        throw error
      })
      request.found?.(entry)
      const input = parseInput(entry, await request.readInput(), catalog.inputSchema(entry))
      return {
        entry,
        input,
        principal,
        workspaceId: request.workspaceId,
        origin: request.origin,
        inlineImages: request.inlineImages === true,
        needsApproval: needsApproval(principal, entry.tool, { value: input }),
        ...(request.trace ? { trace: request.trace } : {}),
        ...(request.callId !== undefined ? { callId: request.callId } : {}),
        ...(request.requestId !== undefined ? { requestId: request.requestId } : {}),
      }
    },
    async admit(call, options = {}) {
      const answer = await gate.admit(call, { dryRun: options.dryRun === true }).catch(async (error: unknown) => {
        // A gated call's dry run can refuse it up front (a denied program, a blocked address).
        if (isToolError(error)) await refusedBy(call, error)
        throw error
      })
      if (answer.kind === 'pending_approval') {
        await audit.record({
          tenant: call.principal.tenant,
          principal: call.principal.id,
          action: 'approval.requested',
          target: answer.pending.approval_id,
          outcome: 'success',
          requestId: call.requestId,
          traceId: traceIdOf(call.trace?.traceparent),
          details: {
            tool: call.entry.name,
            effect: call.entry.tool.effect,
            ...(deps.auditInputs ? { input: inputText(call.input) } : {}),
          },
        })
      }
      return answer.kind === 'run' ? { kind: 'run', call: admit(call) } : answer
    },
    run,
    async decide(principal, id, decision, request) {
      const decided = await gate.decide(principal, id, decision)
      const { record } = decided
      await audit.record({
        tenant: principal.tenant,
        principal: principal.id,
        action: decided.kind === 'rejected' ? 'approval.rejected' : 'approval.approved',
        target: id,
        outcome: 'success',
        requestId: request.requestId,
        traceId: traceIdOf(record.trace?.traceparent),
        details: { tool: record.tool, asked_by: record.principal.id },
      })
      if (decided.kind === 'rejected') return { rejected: true }
      const call = await restore({ ...record, origin: request.origin }).catch((error: unknown) => {
        if (error instanceof ToolError && error.code === 'not_found') {
          throw approvalNotFound(id, `The tool ${record.tool} is no longer in this tenant's catalog.`)
        }
        throw error
      })
      const outcome = await run(call, { mode: 'now', disconnect: request.disconnect })
      return { output: (outcome as { output: unknown }).output, tool: call.entry.name }
    },
    needsApproval: (principal, entry) => needsApproval(principal, entry.tool),
    approvals: { list: (principal, options) => gate.list(principal, options), show: (...args) => gate.show(...args) },
    jobs,
    jobAccess: access,
  }
}

/** The trace id an audit record of the call carries: its span's, else the one its caller sent. */
function traceOf(call: Call, span: TraceSpan): string | undefined {
  return traceIdOf((span.recording ? span.carrier().traceparent : undefined) ?? call.trace?.traceparent)
}

/** A call's input as an audit record may carry it (TOOLPORT_AUDIT_INPUTS): JSON, at most 2,000 characters. */
function inputText(input: unknown): string {
  const text = JSON.stringify(input) ?? 'null'
  return text.length > 2000 ? `${text.slice(0, 1999)}…` : text
}

/** Ends `span` when `work` settles, with its outcome: ok, or the problem's code and status. */
function traced<T>(span: TraceSpan, work: Promise<T>): Promise<T> {
  if (!span.recording) return work
  return work.then(
    (output) => {
      span.setAttributes({ 'toolport.outcome': 'ok', 'http.response.status_code': 200 })
      span.end()
      return output
    },
    (error: unknown) => {
      failSpan(span, error)
      span.end()
      throw error
    },
  )
}

function failSpan(span: TraceSpan, error: unknown): void {
  const code = isToolError(error) ? error.code : 'internal'
  span.setAttributes({ 'toolport.outcome': 'error', 'error.type': code, 'http.response.status_code': statusOf(code) })
  span.fail(error)
}
