import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import {
  CallToolRequestSchema,
  DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js'
import type { Context } from 'hono'
import type { Caller } from '../../caller/caller'
import type { Catalog } from '../../catalog/catalog'
import type { CatalogEntry } from '../../catalog/entry'
import type { Logger } from '../../core/logger'
import { type McpTool, toMcpTool } from '../../platforms/mcp'
import type { AppEnv } from '../env'
import { gatedListing } from './approvals'
import { callTool } from './call'
import { jobTaskStore, taskPollMs } from './tasks'

export interface McpDeps {
  caller: Caller
  catalog: Catalog
  log: Logger
  version: string
}

/** Each tool's MCP listing, derived once per tool (a source's tools are new entries when it reloads). */
export type McpListings = WeakMap<CatalogEntry, McpTool>

export function mcpListings(): McpListings {
  return new WeakMap()
}

function listingOf(listings: McpListings, catalog: Catalog, entry: CatalogEntry): McpTool {
  let listed = listings.get(entry)
  if (!listed) {
    listed = toMcpTool(catalog.listing(entry))
    listings.set(entry, listed)
  }
  return listed
}

/**
 * One MCP request (stateless: a fresh server and transport per POST, so any instance answers any
 * request), on the SDK's own Web-standard transport: 400 for an unsupported MCP-Protocol-Version, an
 * empty 202 for notifications and responses, JSON answers, or an event stream when the request asked
 * for progress. Loaded by the /mcp route on its first request: the MCP SDK is not part of a cold start.
 */
export async function answerMcp(
  context: Context<AppEnv>,
  listings: McpListings,
  deps: McpDeps,
  workspaceId: string,
  body: unknown,
): Promise<Response> {
  const { caller, catalog } = deps
  const principal = context.get('principal')
  const version =
    context.req.header('mcp-protocol-version') ?? initializeVersion(body) ?? DEFAULT_NEGOTIATED_PROTOCOL_VERSION
  const server = new Server(
    { name: 'toolport', version: deps.version },
    {
      // Only what is delivered: no tools/list_changed (a stateless server has no channel for it).
      capabilities: { tools: { listChanged: false }, tasks: { cancel: {}, requests: { tools: { call: {} } } } },
      taskStore: jobTaskStore(caller.jobAccess, principal, version),
      defaultTaskPollInterval: taskPollMs,
    },
  )
  const tasks = version >= '2025-11-25'
  // The catalog only where it is answered: initialize, notifications, calls and tasks do without it.
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: (await catalog.view(principal)).entries.map((entry) => {
      const own = listingOf(listings, catalog, entry)
      // A key whose calls of this tool wait for approval may get a pending approval instead of the output.
      const gated = caller.needsApproval(principal, entry)
      const listed = gated ? gatedListing(own) : own
      if (!tasks) return listed
      // A gated call is answered with its pending approval, never with a task (mcp/call.ts).
      return { ...listed, execution: { taskSupport: gated ? ('forbidden' as const) : ('optional' as const) } }
    }),
  }))
  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    callTool(request, extra, { context, caller, log: deps.log, principal, workspaceId, version }),
  )
  const streamed = asksForProgress(body)
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    // An event stream only where it carries something: progress of a call that asked for it.
    enableJsonResponse: !streamed,
  })
  await server.connect(transport)
  let response: Response
  try {
    response = await transport.handleRequest(context.req.raw, { parsedBody: body })
  } catch (error) {
    await server.close()
    throw error
  }
  if (!streamed || !response.body) {
    await server.close()
    return response
  }
  // An event stream is still being written when it is returned: the server closes once it has ended.
  const closing = new TransformStream<Uint8Array, Uint8Array>({ flush: () => server.close() })
  void response.body.pipeTo(closing.writable).catch(() => server.close())
  return new Response(closing.readable, { status: response.status, headers: response.headers })
}

function initializeVersion(body: unknown): string | undefined {
  const messages = Array.isArray(body) ? body : [body]
  for (const message of messages) {
    const candidate = message as { method?: unknown; params?: { protocolVersion?: unknown } } | null
    if (candidate?.method === 'initialize' && typeof candidate.params?.protocolVersion === 'string') {
      return candidate.params.protocolVersion
    }
  }
  return undefined
}

function asksForProgress(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body]
  return messages.some((message) => {
    const candidate = message as {
      method?: unknown
      params?: { _meta?: { progressToken?: unknown }; task?: unknown }
    } | null
    return candidate?.method === 'tools/call' && candidate.params?._meta?.progressToken !== undefined
  })
}
