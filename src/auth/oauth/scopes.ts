import { type Effect, effects } from '../../core/effects'

/**
 * The scope strings a token may carry, and what each lets it do:
 * - `tools:<effect>` (`tools:read`, `tools:write`, `tools:external`, `tools:destructive`): every tool
 *   with that effect;
 * - `tool:<name or id>` (`tool:read_file`, `tool:tickets:create`): one tool;
 * - `source:<id>`: every tool of one source;
 * - `approver`: may decide the tenant's pending approvals;
 * - `admin`: may manage the tenant's sources.
 * Scopes only narrow: a token never gets more than its tenant's catalog. Unknown scopes are ignored
 * (a shared issuer's tokens carry other APIs' scopes too).
 */
export const effectScope = (effect: Effect) => `tools:${effect}`

/** What a client may ask for, as the protected resource metadata lists it (single tools and sources are open-ended). */
export const scopesSupported: readonly string[] = [...effects.map(effectScope), 'approver', 'admin']

export interface ScopeGrant {
  /** Effects whose every tool the token may call. */
  effects: ReadonlySet<Effect>
  /** Single tools (names or ids) and whole sources (`source:*`) the token may call besides. */
  tools: ReadonlySet<string>
  approver: boolean
  admin: boolean
}

export function grantOf(scopes: readonly string[]): ScopeGrant {
  const granted = new Set<Effect>()
  const tools = new Set<string>()
  for (const scope of scopes) {
    const effect = effects.find((candidate) => scope === effectScope(candidate))
    if (effect) granted.add(effect)
    else if (scope.startsWith('tool:') && scope.length > 5) tools.add(scope.slice(5))
    else if (scope.startsWith('source:') && scope.length > 7) tools.add(`${scope.slice(7)}:*`)
  }
  return { effects: granted, tools, approver: scopes.includes('approver'), admin: scopes.includes('admin') }
}

/** A token's scopes: `scope` (space-separated, RFC 9068) or `scp` (a list or a string: Entra, Okta). */
export function scopesOf(claims: Record<string, unknown>): string[] {
  const from = (value: unknown): string[] => {
    if (typeof value === 'string') return value.split(' ').filter(Boolean)
    if (Array.isArray(value)) return value.filter((entry): entry is string => typeof entry === 'string')
    return []
  }
  return [...new Set([...from(claims.scope), ...from(claims.scp)])]
}
