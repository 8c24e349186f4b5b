import type { Context } from 'hono'
import type { Principal } from '../../auth/principal'
import type { Caller } from '../../caller/caller'
import type { Catalog } from '../../catalog/catalog'
import type { CatalogEntry } from '../../catalog/entry'
import type { Logger } from '../../core/logger'
import { type McpTool, toMcpTool } from '../../platforms/mcp'
import type { ContextDeps } from '../context-document'
import type { AppEnv } from '../env'
import { type ClientRequests, createClientRequests } from './client-requests'
import { createParkedCalls, type ParkedCalls } from './parked-calls'
import { createMcpSessions, type McpSessions } from './sessions'
import { createSurface, type Surface } from './surface'

export interface McpDeps {
  caller: Caller
  catalog: Catalog
  log: Logger
  version: string
  /** What the context prompt and the workspace resources read. */
  context: ContextDeps
}

/** What one HTTP request lends a per-request MCP server: who asks, on which workspace. */
export interface McpAsk {
  context: Context<AppEnv>
  principal: Principal
  workspaceId: string
}

/** What the /mcp route keeps between requests: derived listings, and the requests awaiting a client. */
export interface McpState {
  listings: WeakMap<CatalogEntry, McpTool>
  clientRequests: ClientRequests
  /** 2026-07-28 calls waiting for their client's answers (multi round-trip requests). */
  parkedCalls: ParkedCalls
  surface: Surface
  /** 2025 clients' sessions: their resource subscriptions, in the bucket (sessions.ts). */
  sessions: McpSessions
  /** The 2026-07-28 server (modern.ts), made on the first request that speaks it. */
  modern?: { answer(ask: McpAsk, body: unknown): Promise<Response> }
  /** The v2 SDK's request classification, loaded on the first request that claims 2026-07-28. */
  classify?: typeof import('@modelcontextprotocol/server')['classifyInboundRequest']
}

export function mcpState(deps: McpDeps): McpState {
  return {
    listings: new WeakMap(),
    clientRequests: createClientRequests(),
    parkedCalls: createParkedCalls(),
    surface: createSurface({ caller: deps.caller, catalog: deps.catalog, context: deps.context, log: deps.log }),
    sessions: createMcpSessions(deps.context.storage),
  }
}

/** Each tool's MCP listing, derived once per tool (a source's tools are new entries when it reloads). */
export function listingOf(state: McpState, catalog: Catalog, entry: CatalogEntry): McpTool {
  let listed = state.listings.get(entry)
  if (!listed) {
    listed = toMcpTool(catalog.listing(entry))
    state.listings.set(entry, listed)
  }
  return listed
}
