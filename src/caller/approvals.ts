import { type ApprovalRecord, type ApprovalStore, newApprovalId } from '../approvals/store'
import { type Principal, storedFormOf, storedPrincipal } from '../auth/principal'
import { ToolError } from '../core/errors'
import type { HttpClient } from '../net/http'
import { type DryRunContext, type ServiceName, type Tool, type ToolLimits, titleOfCall } from '../tools/tool'
import { type ApprovalCard, cardOf, notifyApprovers } from './approval-card'
import type { Call } from './call'
import { type FittedPreview, fitPreview } from './preview'

/** The 202 body of a call that waits for an approver. */
export interface PendingApproval {
  status: 'pending_approval'
  approval_id: string
  title: string
  tool: string
  preview: unknown
  /** Set when the preview was cut to the response limit, with a hint. */
  truncated?: true
  hint?: string
  expires_at: string
  approve_url: string
}

/** What the gate answers: run the call, or an answer instead of running it. */
export type GateAnswer =
  | { kind: 'run' }
  | ({ kind: 'dry_run' } & FittedPreview)
  | { kind: 'pending_approval'; pending: PendingApproval }

/**
 * Whether this key's calls of the tool wait for an approver: its policy names the tool's effect, or,
 * given the call's input, that call's own (Tool.callEffect). The one place that decides it (prepare
 * asks it for each call; MCP's tools/list, without an input, to say whether a call may wait).
 */
export function needsApproval(
  principal: Principal,
  tool: Pick<Tool, 'effect' | 'callEffect'>,
  input?: { value: unknown },
): boolean {
  return principal.requireApproval.has(input ? effectOfCall(tool, input.value) : tool.effect)
}

/** A call's effect: the tool's, or the narrower one its input makes it (an http_fetch GET reads). */
export function effectOfCall(tool: Pick<Tool, 'effect' | 'callEffect'>, input: unknown): Tool['effect'] {
  return tool.callEffect?.(input) ?? tool.effect
}

export interface ApprovalGateDeps {
  store: ApprovalStore
  limits: ToolLimits
  /** The context a call's dry run runs with: its workspace, its key, its tool's services. */
  dryRunContext(call: Call): DryRunContext<ServiceName>
  /** The outbound client the approvers' webhook is posted with; unset: no webhook. */
  http: HttpClient | undefined
  ttlSeconds: number
  /** TOOLPORT_PUBLIC_URL when set; otherwise approve_url points at the request's origin. */
  publicUrl: string | undefined
  /** TOOLPORT_APPROVAL_WEBHOOK_URL and the secret its posts are signed with. */
  webhook?: { url: string; secret: string | Uint8Array } | undefined
  /** Told once of each pending call found expired (and removed): the audit log's approval.expired. */
  onExpired?: ((record: ApprovalRecord) => Promise<void>) | undefined
  now?: () => Date
}

/** A decided approval: the call to run (approve), or nothing to run (reject). */
export type Decision =
  | { kind: 'rejected'; record: ApprovalRecord }
  | { kind: 'approved'; record: ApprovalRecord; principal: Principal }

export interface ApprovalGate {
  /**
   * Runs before a call: ?dry_run=true answers the preview; a call the key must have approved is stored
   * and answered pending — after its dry run, so a refusal known up front (missing file, bad path,
   * old_text not found, a denied program, a blocked address, a size limit) is answered at once instead
   * of costing someone a decision, and a call that would change nothing just runs.
   */
  admit(call: Call, options: { dryRun: boolean }): Promise<GateAnswer>
  /** Takes a pending call out of the store (once: a second decision finds nothing) and decides it. */
  decide(principal: Principal, id: string, decision: 'approve' | 'reject'): Promise<Decision>
  /** The approver's inbox: the tenant's pending calls, newest first. */
  list(
    principal: Principal,
    options: { limit: number; cursor?: string | undefined; origin: string | undefined },
  ): Promise<{ approvals: ApprovalCard[]; next_cursor?: string }>
  /** One pending call's card, for an approver of its tenant. */
  show(principal: Principal, id: string, origin: string | undefined): Promise<ApprovalCard>
}

export function approvalNotFound(
  id: string,
  hint = 'Approvals are visible only to their tenant and are gone once decided.',
) {
  return new ToolError('not_found', `No pending approval ${id} for this key.`, { hint })
}

/**
 * The key that asked for a call must not be the one that lets it through, or a model holding it could
 * approve its own calls: deciding takes a separate approver key.
 */
function notAnApprover() {
  return new ToolError('permission_denied', 'This key may not see or decide approvals.', {
    hint: 'Use an approver key of the same tenant: a keys-file entry with "approver": true. The key whose calls need approval cannot approve them.',
  })
}

export function approvalUrl(origin: string, id: string): string {
  return `${origin}/v1/approvals/${id}`
}

export function createApprovalGate(deps: ApprovalGateDeps): ApprovalGate {
  const now = deps.now ?? (() => new Date())
  const originOf = (origin: string | undefined) => deps.publicUrl ?? origin ?? ''
  return {
    async admit(call, options) {
      const { principal } = call
      const { tool } = call.entry
      if (!options.dryRun && !call.needsApproval) return { kind: 'run' }
      if (options.dryRun && !tool.dryRun) {
        throw new ToolError('validation', `${tool.name} has no dry run.`, {
          hint: 'dry_run=true is for tools that change or reach something: a read changes nothing, so call it without dry_run.',
          details: { field: 'dry_run' },
        })
      }
      const title = titleOfCall(tool, call.input)
      // Every check that does not depend on the decision runs here; the call runs them all again.
      const preview = tool.dryRun
        ? await tool.dryRun(call.input, deps.dryRunContext(call))
        : { title, input: call.input }
      const fitted = fitPreview(preview, deps.limits.maxResponseChars)
      if (options.dryRun) return { kind: 'dry_run', ...fitted }
      // Nothing to decide: such a call runs without asking anyone.
      if (tool.changesNothing?.(preview)) return { kind: 'run' }
      const created = now()
      const record: ApprovalRecord = {
        id: newApprovalId(created),
        tenant: principal.tenant,
        principal: storedFormOf(principal),
        tool: call.entry.name,
        effect: effectOfCall(tool, call.input),
        workspace: call.workspaceId,
        ...(call.trace?.traceparent ? { trace: call.trace } : {}),
        input: call.input,
        title,
        ...fitted,
        created_at: created.toISOString(),
        expires_at: new Date(created.getTime() + deps.ttlSeconds * 1000).toISOString(),
      }
      await deps.store.save(record)
      const origin = originOf(call.origin)
      if (deps.webhook && deps.http) notifyApprovers(deps.http, deps.webhook, cardOf(record, origin), call.trace)
      return {
        kind: 'pending_approval',
        pending: {
          status: 'pending_approval',
          approval_id: record.id,
          title,
          tool: call.entry.name,
          ...fitted,
          expires_at: record.expires_at,
          approve_url: approvalUrl(origin, record.id),
        },
      }
    },

    async decide(principal, id, decision) {
      // Checked before the lookup, so a key that may not decide learns nothing about pending calls.
      if (!principal.approver) throw notAnApprover()
      // Removed before anything runs: a second decision, concurrent or later, finds nothing.
      const record = await deps.store.take(principal.tenant, id)
      if (!record) throw approvalNotFound(id)
      if (Date.parse(record.expires_at) <= now().getTime()) {
        await deps.onExpired?.(record)
        throw approvalNotFound(id, `The approval expired at ${record.expires_at}; call the tool again to ask anew.`)
      }
      if (decision === 'reject') return { kind: 'rejected', record }
      // The caller that asked, with its tool scope; the approval is what lets it through.
      return {
        kind: 'approved',
        record,
        principal: storedPrincipal({ ...record.principal, tenant: record.tenant }),
      }
    },

    async list(principal, options) {
      if (!principal.approver) throw notAnApprover()
      const page = await deps.store.list(principal.tenant, {
        limit: options.limit,
        cursor: options.cursor,
        now: now(),
      })
      for (const record of page.expired) await deps.onExpired?.(record)
      return {
        approvals: page.records.map((record) => cardOf(record, originOf(options.origin))),
        ...(page.cursor ? { next_cursor: page.cursor } : {}),
      }
    },

    async show(principal, id, origin) {
      if (!principal.approver) throw notAnApprover()
      const record = await deps.store.load(principal.tenant, id)
      if (!record || Date.parse(record.expires_at) <= now().getTime()) throw approvalNotFound(id)
      return cardOf(record, originOf(origin))
    },
  }
}
