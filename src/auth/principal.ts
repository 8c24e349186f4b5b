import type { Effect } from '../core/effects'
import { ToolError } from '../core/errors'

/** Who is calling: a tenant, and the tools its key may use (undefined: every enabled tool). */
export interface Principal {
  /** Stable and non-secret: 'anonymous', or 'key-N' for the N-th configured key (rate limits, metrics). */
  id: string
  tenant: string
  tools: ReadonlySet<string> | undefined
  /** Effects whose calls wait for an approval (POST /v1/approvals/{id}); empty: none. */
  requireApproval: ReadonlySet<Effect>
  /** May decide the tenant's pending approvals; never together with requireApproval. */
  approver: boolean
}

/**
 * The principal a stored call (a job, an approved call) runs as: the key that asked, with its tool
 * scope. It needs no approval any more (it has one, or never needed one) and decides none.
 */
export function storedPrincipal(stored: { id: string; tenant: string; tools: readonly string[] | null }): Principal {
  return {
    id: stored.id,
    tenant: stored.tenant,
    tools: stored.tools ? new Set(stored.tools) : undefined,
    requireApproval: new Set(),
    approver: false,
  }
}

/** May this principal see and call the tool? */
export function mayCall(principal: Principal, tool: string): boolean {
  return !principal.tools || principal.tools.has(tool)
}

export function assertToolAllowed(principal: Principal, tool: string): void {
  if (mayCall(principal, tool)) return
  const allowed = [...(principal.tools ?? [])].sort().join(', ')
  throw new ToolError('permission_denied', `This key may not call ${tool}.`, {
    hint: `This key may call only: ${allowed}.`,
  })
}
