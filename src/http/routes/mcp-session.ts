import { StreamableHTTPTransport } from '@hono/mcp'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import {
  CallToolRequestSchema,
  type CallToolResult,
  type ContentBlock,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js'
import type { Context } from 'hono'
import { HTTPException } from 'hono/http-exception'
import { z } from 'zod'
import { assertToolAllowed } from '../../auth/principal'
import type { Call } from '../../caller/call'
import type { Caller } from '../../caller/caller'
import type { JsonSchema } from '../../core/json-schema'
import type { Logger } from '../../core/logger'
import { type McpTool, toMcpTool } from '../../platforms/mcp'
import { stripNullOptionals } from '../../platforms/nulls'
import type { ToolRegistry } from '../../registry/registry'
import type { Tool } from '../../tools/tool'
import type { AppEnv } from '../env'
import { problemBody, validationError } from '../problem'
import { gatedListing, pendingResult } from './mcp-approvals'

export interface McpDeps {
  caller: Caller
  log: Logger
  version: string
}

/**
 * One MCP request, answered by a fresh server and transport (stateless). Loaded by the /mcp route on
 * its first request: the MCP SDK and every tool's MCP listing are not part of a cold start.
 */
interface McpEntry {
  tool: Tool
  listed: McpTool
  inputSchema: JsonSchema
}

/** Each tool's MCP listing, derived once per tool (a source's tools are new objects when it reloads). */
export type McpListings = WeakMap<Tool, McpEntry>

export function mcpListings(): McpListings {
  return new WeakMap()
}

function entryOf(listings: McpListings, registry: ToolRegistry, tool: Tool): McpEntry {
  let entry = listings.get(tool)
  if (!entry) {
    entry = { tool, listed: toMcpTool(registry.entry(tool)), inputSchema: registry.inputSchema(tool) }
    listings.set(tool, entry)
  }
  return entry
}

export async function answerMcp(
  context: Context<AppEnv>,
  listings: McpListings,
  deps: McpDeps,
  workspaceId: string,
): Promise<Response | undefined> {
  const registry = deps.caller.registry
  const catalog = await registry.catalog(context.get('principal'))
  const entries = catalog.tools.map((tool) => entryOf(listings, registry, tool))
  // A call looks in the tenant's whole catalog, so a tool outside the key's scope is refused as such.
  const lookup = (name: string) =>
    registry.resolve(context.get('principal').tenant, name).then(
      (tool) => entryOf(listings, registry, tool),
      () => undefined,
    )
  const server = createServer(context, { entries, lookup }, deps, workspaceId)
  const transport = new StreamableHTTPTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
  await server.connect(transport)
  try {
    return await transport.handleRequest(context)
  } catch (error) {
    // The transport reports JSON-RPC errors as HTTP exceptions carrying the JSON-RPC answer, in a response
    // made without a status (200): the exception's status (400, 406, 415) is the one to send.
    if (error instanceof HTTPException && error.res) {
      return new Response(error.res.body, { status: error.status, headers: error.res.headers })
    }
    throw error
  } finally {
    await server.close()
  }
}

function createServer(
  context: Context<AppEnv>,
  catalog: { entries: readonly McpEntry[]; lookup(name: string): Promise<McpEntry | undefined> },
  deps: McpDeps,
  workspaceId: string,
): McpServer {
  const principal = context.get('principal')
  const server = new McpServer(
    { name: 'toolport', version: deps.version },
    { capabilities: { tools: { listChanged: false } } },
  )
  // The catalog is the principal's already: every tool listed here is one it may call.
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: catalog.entries.map((entry) =>
      principal.requireApproval.has(entry.tool.effect) ? gatedListing(entry.listed) : entry.listed,
    ),
  }))
  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const entry = await catalog.lookup(request.params.name)
    if (!entry) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`)
    context.set('tool', entry.tool.name)
    context.set('toolSource', entry.tool.source)
    try {
      assertToolAllowed(principal, entry.tool)
      const call: Call = {
        tool: entry.tool,
        input: parseInput(entry, request.params.arguments ?? {}),
        principal,
        workspaceId,
        origin: context.get('linkOrigin'),
        signal: AbortSignal.any([context.req.raw.signal, extra.signal]),
        inlineImages: true,
      }
      // The same gate as REST: a call this key's policy gates waits for an approver.
      const admission = await deps.caller.admit(call, { dryRun: false })
      if (admission?.kind === 'pending_approval') return pendingResult(admission.pending)
      const output = await deps.caller.invoke({ ...call, origin: undefined })
      const { structured, images } = splitImages(output)
      return {
        structuredContent: structured,
        content: [{ type: 'text', text: JSON.stringify(structured) }, ...images, ...fileLinks(structured)],
      }
    } catch (error) {
      // A failed tool is a result the model reads (isError), not a protocol error: it can correct the call.
      return { isError: true, content: [{ type: 'text', text: JSON.stringify(problemBody(error, context, deps.log)) }] }
    }
  })
  return server
}

/** The same input handling as REST: nulls for unset optional fields dropped, then the tool's own schema. */
function parseInput(entry: McpEntry, args: Record<string, unknown>): unknown {
  const input = stripNullOptionals(structuredClone(args), entry.inputSchema)
  const parsed = entry.tool.input.safeParse(input)
  if (!parsed.success) throw validationError(parsed.error, 'input', entry.inputSchema)
  return parsed.data
}

const InlineImage = z.object({ mime_type: z.string(), data: z.string() })

/** An output's `image` (a tool's picture for the model) becomes an image block, not JSON text. */
function splitImages(output: unknown): { structured: Record<string, unknown>; images: ContentBlock[] } {
  const { image, ...rest } = output as Record<string, unknown>
  const parsed = InlineImage.safeParse(image)
  if (!parsed.success) return { structured: output as Record<string, unknown>, images: [] }
  return { structured: rest, images: [{ type: 'image', data: parsed.data.data, mimeType: parsed.data.mime_type }] }
}

const FileList = z.array(
  z.object({ url: z.string(), name: z.string(), mime_type: z.string().optional(), size: z.number().optional() }),
)

/** Files a tool made (`files: [{ url, name, mime_type }]`) become links the client can fetch. */
function fileLinks(output: unknown): ContentBlock[] {
  const files = FileList.safeParse((output as { files?: unknown } | null)?.files)
  if (!files.success) return []
  return files.data.map((file) => ({
    type: 'resource_link',
    uri: file.url,
    name: file.name,
    ...(file.mime_type ? { mimeType: file.mime_type } : {}),
    ...(file.size !== undefined ? { size: file.size } : {}),
  }))
}
