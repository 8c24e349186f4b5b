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
import type { Caller } from '../../caller/caller'
import type { Logger } from '../../core/logger'
import { type McpTool, toMcpTool } from '../../platforms/mcp'
import { stripNullOptionals } from '../../platforms/nulls'
import type { JsonSchema } from '../../platforms/schema'
import type { ToolRegistry } from '../../registry/registry'
import type { Tool } from '../../tools/tool'
import type { AppEnv } from '../env'
import { problemBody, validationError } from '../problem'

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

export type McpEntries = ReadonlyMap<string, McpEntry>

export function mcpEntries(registry: ToolRegistry): McpEntries {
  return new Map(
    registry.tools.map((tool) => [
      tool.name,
      { tool, listed: toMcpTool(registry.entry(tool)), inputSchema: registry.inputSchema(tool) },
    ]),
  )
}

export async function answerMcp(
  context: Context<AppEnv>,
  entries: McpEntries,
  deps: McpDeps,
  workspaceId: string,
): Promise<Response | undefined> {
  const server = createServer(context, entries, deps, workspaceId)
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

function createServer(context: Context<AppEnv>, entries: McpEntries, deps: McpDeps, workspaceId: string): McpServer {
  const principal = context.get('principal')
  const server = new McpServer(
    { name: 'toolport', version: deps.version },
    { capabilities: { tools: { listChanged: false } } },
  )
  const visible = [...entries.values()].filter((entry) => !principal.tools || principal.tools.has(entry.tool.name))
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: visible.map((entry) => entry.listed) }))
  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const entry = entries.get(request.params.name)
    if (!entry) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`)
    context.set('tool', entry.tool.name)
    try {
      assertToolAllowed(principal, entry.tool.name)
      const output = await deps.caller.invoke({
        tool: entry.tool,
        input: parseInput(entry, request.params.arguments ?? {}),
        principal,
        workspaceId,
        origin: undefined,
        signal: AbortSignal.any([context.req.raw.signal, extra.signal]),
        inlineImages: true,
      })
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
  if (!parsed.success) throw validationError(parsed.error, 'input')
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
