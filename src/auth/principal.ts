import type { Effect } from '../core/effects'
import { type EgressPolicy, type EgressText, formatEgress, parseEgress } from '../core/egress-policy'
import { ToolError } from '../core/errors'

/** Who is calling: a tenant, and the tools its key may use (undefined: every enabled tool). */
export interface Principal {
  /** Stable and non-secret: 'anonymous', or 'key-N' for the N-th configured key (rate limits, metrics). */
  id: string
  tenant: string
  /**
   * What the key may call: built-in names (`read_file`), tool ids (`tickets:create`, `builtin:read_file`)
   * and whole sources (`tickets:*`). Undefined: every tool of the tenant's catalog.
   */
  tools: ReadonlySet<string> | undefined
  /** Effects whose calls wait for an approval (POST /v1/approvals/{id}); empty: none. */
  requireApproval: ReadonlySet<Effect>
  /** May decide the tenant's pending approvals; never together with requireApproval. */
  approver: boolean
  /** May register, change and remove the tenant's tool sources (/v1/sources). */
  admin?: boolean
  /** The key's shell egress policy (keys file), within the server's; undefined: the server's applies. */
  egress: EgressPolicy | undefined
  /**
   * An OAuth token's effect scopes (`tools:read`, …): it may call every tool with these effects, and
   * the single tools and sources in `tools` besides. Undefined for keys.
   */
  effects?: ReadonlySet<Effect> | undefined
  /** Set when the caller presented an OAuth access token: its scopes (a missing one answers insufficient_scope). */
  oauth?: { scopes: readonly string[] } | undefined
  /** A token's hard limit, whatever its scopes: the tools of the key it was issued through. */
  toolLimit?: ReadonlySet<string> | undefined
  /** The workspace of a call that names none (a token's workspace claim); default `default`. */
  defaultWorkspace?: string | undefined
}

/** What a stored call (job, approval) keeps of its principal besides the tenant. */
export interface StoredPrincipal {
  id: string
  tools: string[] | null
  /** The key's egress in its written form; absent (older records) or null: none of its own. */
  egress?: EgressText | null
  /** A token's effect scopes; absent or null: a key (no effect limit). */
  effects?: Effect[] | null
}

export function storedFormOf(principal: Principal): StoredPrincipal {
  return {
    id: principal.id,
    tools: principal.tools ? [...principal.tools] : null,
    egress: principal.egress ? formatEgress(principal.egress) : null,
    ...(principal.effects ? { effects: [...principal.effects] } : {}),
  }
}

/** What a scope check needs of a tool: its name, and for a source tool its id and source. */
export interface ScopedTool {
  name: string
  /** Callable by every key (the job tools). */
  everyKey?: boolean | undefined
  id?: string | undefined
  source?: string | undefined
  /** The built-in an alias runs. */
  aliasOf?: string | undefined
  /** The tool itself: its effect decides a token's effect scopes. */
  tool?: { readonly effect: Effect } | undefined
}

/**
 * The principal a stored call (a job, an approved call) runs as: the key that asked, with its tool
 * scope. It needs no approval any more (it has one, or never needed one) and decides none.
 */
export function storedPrincipal(stored: StoredPrincipal & { tenant: string }): Principal {
  return {
    id: stored.id,
    tenant: stored.tenant,
    tools: stored.tools ? new Set(stored.tools) : undefined,
    requireApproval: new Set(),
    approver: false,
    egress: storedEgress(stored.egress),
    ...(stored.effects ? { effects: new Set(stored.effects) } : {}),
  }
}

/** A stored egress that no longer parses closes the network rather than falling back to the server's. */
function storedEgress(text: EgressText | null | undefined): EgressPolicy | undefined {
  if (text === undefined || text === null) return undefined
  const parsed = parseEgress(text)
  return 'policy' in parsed ? parsed.policy : { mode: 'none' }
}

/** May this principal see and call the tool? A built-in by name or id; a source tool by id or source. */
export function mayCall(principal: Principal, tool: ScopedTool): boolean {
  if (tool.everyKey) return true
  // A token of a key limited to some tools (the built-in server's toolport_tools claim) never reaches beyond them.
  if (principal.toolLimit && !inToolSet(principal.toolLimit, tool)) return false
  const scope = principal.tools
  if (!scope) return true
  if (principal.effects && tool.tool && principal.effects.has(tool.tool.effect)) return true
  return inToolSet(scope, tool)
}

/** Whether a set of names, ids and whole sources (`source:*`) names the tool. */
function inToolSet(scope: ReadonlySet<string>, tool: ScopedTool): boolean {
  if (tool.aliasOf !== undefined) {
    // An alias is the built-in under another name: a key that has the built-in has it, and one given
    // the alias by its own id; a whole source (`id:*`) does not reach the built-ins its aliases run,
    // so adding an alias to a source never widens what the keys scoped to that source may do.
    return (
      scope.has(tool.aliasOf) || scope.has(`builtin:${tool.aliasOf}`) || (tool.id !== undefined && scope.has(tool.id))
    )
  }
  if (tool.source === undefined) return scope.has(tool.name) || scope.has(`builtin:${tool.name}`)
  return (tool.id !== undefined && scope.has(tool.id)) || scope.has(`${tool.source}:*`)
}

export function assertToolAllowed(principal: Principal, tool: ScopedTool): void {
  if (mayCall(principal, tool)) return
  if (principal.oauth && !(principal.toolLimit && !inToolSet(principal.toolLimit, tool))) {
    // A token: name the scope that would let it (the client may ask the user for it: step-up).
    const needed = tool.tool ? `tools:${tool.tool.effect}` : `tool:${tool.id ?? tool.name}`
    throw new ToolError('permission_denied', `This token lacks the scope ${needed} to call ${tool.name}.`, {
      hint: `Sign in again and grant ${needed} (or tool:${tool.id ?? tool.name} for this tool alone).`,
      details: { error: 'insufficient_scope', scope: needed },
      refusal: { kind: 'scope', target: tool.name },
    })
  }
  const allowed = [...(principal.tools ?? [])].sort().join(', ')
  throw new ToolError('permission_denied', `This key may not call ${tool.name}.`, {
    hint: `This key may call only: ${allowed}.`,
    refusal: { kind: 'scope', target: tool.name },
  })
}
