import type { Context } from 'hono'
import type { Disconnect } from '../caller/call'
import { disconnectOf } from '../caller/call'
import type { CatalogEntry } from '../catalog/entry'
import type { AppEnv } from './env'
import { nodeDisconnect } from './node-bindings'

// What every transport of a tool call tells the rest of the request about it: REST, MCP and approvals alike.

/** Labels the request with the tool it calls, for the access log and the metrics (a tenant's own tool unnamed there). */
export function labelCall(context: Context<AppEnv>, entry: CatalogEntry): void {
  context.set('tool', entry.name)
  context.set('toolSource', entry.source)
  if (entry.tenantSource) context.set('toolOfTenant', true)
}

/**
 * How this request hears its client go away: on Node the response's own close (no AbortSignal is made
 * for a call that never needs one), elsewhere the request's signal, read only when a call subscribes.
 */
export function requestDisconnect(context: Context<AppEnv>): Disconnect {
  return nodeDisconnect(context) ?? ((listener) => disconnectOf(context.req.raw.signal)(listener))
}
