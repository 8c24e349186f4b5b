import type { ApprovalRecord } from '../approvals/store'
import type { TraceCarrier } from '../core/tracing'
import { deliverCallback } from '../jobs/callback'
import type { HttpClient } from '../net/http'

/** What an approver sees of one pending call: GET /v1/approvals/{id}, the inbox, the webhook. */
export interface ApprovalCard {
  approval_id: string
  status: 'pending'
  title: string
  tool: string
  effect?: string
  workspace: string
  input: unknown
  preview: unknown
  truncated?: true
  hint?: string
  /** The key that asked ('key-N', as in logs and metrics; never the key itself). */
  requested_by: string
  created_at: string
  expires_at: string
  /** GET the card, or POST {"decision": "approve" | "reject"} here with an approver key. */
  approve_url: string
}

export function cardOf(record: ApprovalRecord, origin: string): ApprovalCard {
  return {
    approval_id: record.id,
    status: 'pending',
    title: record.title,
    tool: record.tool,
    ...(record.effect ? { effect: record.effect } : {}),
    workspace: record.workspace,
    input: record.input,
    // Records from before previews were kept show what an approver had then: the title and input.
    preview: record.preview ?? { title: record.title, input: record.input },
    ...(record.truncated ? { truncated: true as const } : {}),
    ...(record.hint ? { hint: record.hint } : {}),
    requested_by: record.principal.id,
    created_at: record.created_at,
    expires_at: record.expires_at,
    approve_url: `${origin}/v1/approvals/${record.id}`,
  }
}

/**
 * Tells the operator's approver endpoint that a call waits, signed like job callbacks. In the
 * background: the caller's 202 does not wait on someone else's server, and a failed delivery only
 * means the approver finds the call in GET /v1/approvals instead.
 */
export function notifyApprovers(
  http: HttpClient,
  webhook: { url: string; secret: string | Uint8Array },
  card: ApprovalCard,
  trace?: TraceCarrier,
): void {
  void deliverCallback(
    {
      id: `approval.${card.approval_id}`,
      url: webhook.url,
      payload: { event: 'approval.created', approval: card },
      // The gated call's caller's trace: the approver's tooling may join it.
      ...(trace?.traceparent ? { trace } : {}),
    },
    { http, secret: webhook.secret, attempts: 3, backoffMs: 1000 },
  ).catch(() => {})
}
