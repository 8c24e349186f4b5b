/**
 * The audit trail as the rest of toolport sees it: security-relevant events, each said once where it
 * happens (a source changed, an approval decided, a call or a connection refused, a key refused), with
 * no storage type anywhere (audit/audit-log.ts keeps them in the bucket, hash-chained per tenant).
 * Recording never throws and never holds up the answer for long: an audit log that cannot be written
 * is the operator's problem to see in the logs, not the caller's.
 */
export type AuditAction =
  | 'source.created'
  | 'source.changed'
  | 'source.enabled'
  | 'source.disabled'
  | 'source.removed'
  | 'approval.requested'
  | 'approval.approved'
  | 'approval.rejected'
  | 'approval.expired'
  | 'call.refused'
  | 'egress.refused'
  | 'page.refused'
  | 'auth.refused'
  | 'auth.signed_in'
  | 'auth.sign_in_refused'
  | 'audit.pruned'

export const auditActions: readonly AuditAction[] = [
  'source.created',
  'source.changed',
  'source.enabled',
  'source.disabled',
  'source.removed',
  'approval.requested',
  'approval.approved',
  'approval.rejected',
  'approval.expired',
  'call.refused',
  'egress.refused',
  'page.refused',
  'auth.refused',
  'auth.signed_in',
  'auth.sign_in_refused',
  'audit.pruned',
]

export type AuditOutcome = 'success' | 'refused' | 'expired'

/** Short facts about an event: names, counts, reasons; never a secret, a file's content or a call's input. */
export type AuditDetails = Record<string, string | number | boolean | null>

export interface AuditEvent {
  /** The tenant whose chain keeps it; `_service` for what belongs to no tenant (an unknown key). */
  tenant: string
  /** Who acted: a key id (`key-2`), `anonymous`, `unknown` (a refused key), or `system` (expiry, pruning). */
  principal: string
  action: AuditAction
  /** What it acted on: a source id, an approval id, a tool name, a host. */
  target?: string | undefined
  outcome: AuditOutcome
  requestId?: string | undefined
  /** The W3C trace id of the call it happened in, when there is one. */
  traceId?: string | undefined
  details?: AuditDetails | undefined
}

/** The chain of tenants that have none: refusals of keys that name no tenant. */
export const serviceAuditTenant = '_service'

export interface Audit {
  readonly enabled: boolean
  /** Keeps the event (and logs it); never throws. */
  record(event: AuditEvent): Promise<void>
}

export const noAudit: Audit = { enabled: false, record: async () => {} }

/** The trace id of a W3C traceparent (`00-{trace id}-{span id}-{flags}`), if it is one. */
export function traceIdOf(traceparent: string | undefined): string | undefined {
  const match = traceparent ? /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}$/.exec(traceparent) : null
  return match && match[1] !== '0'.repeat(32) ? match[1] : undefined
}
