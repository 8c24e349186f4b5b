import { StreamableHTTPTransport } from '@hono/mcp'
import type { OpenAPIHono } from '@hono/zod-openapi'
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
import { bodyLimit } from 'hono/body-limit'
import { HTTPException } from 'hono/http-exception'
import { z } from 'zod'
import { assertToolAllowed } from '../auth'
import { isLoopbackHost } from '../config'
import { type McpTool, toMcpTool } from '../platforms/mcp'
import { stripNullOptionals } from '../platforms/nulls'
import type { JsonSchema } from '../platforms/schema'
import { ToolError } from '../tools/errors'
import { invokeTool } from '../tools/invoke'
import type { Tool } from '../tools/tool'
import { catalogEntry, inputSchemaOf } from './catalog'
import type { AppEnv } from './env'
import { problemBody, validationError } from './problem'
import { type ToolRouteDeps, WorkspaceId } from './tools'

export interface McpRouteDeps extends ToolRouteDeps {
  version: string
  /** The service's public URL: browsers may call /mcp only from its origin (or from loopback). */
  publicUrl: string
}

interface McpEntry {
  tool: Tool
  listed: McpTool
  inputSchema: JsonSchema
}

/**
 * MCP over Streamable HTTP, stateless: every POST gets a fresh server and transport, so any instance
 * behind a load balancer can answer any request and nothing outlives the call. Calls go through the
 * same invokeTool as REST, with the principal the auth middleware found and `?workspace=`.
 */
export function registerMcpRoute(app: OpenAPIHono<AppEnv>, tools: readonly Tool[], deps: McpRouteDeps): void {
  const entries = new Map<string, McpEntry>(
    tools.map((tool) => [tool.name, { tool, listed: toMcpTool(catalogEntry(tool)), inputSchema: inputSchemaOf(tool) }]),
  )
  const limitBody = bodyLimit({
    maxSize: deps.maxBodyBytes,
    onError: () => {
      throw new ToolError('size_exceeded', `The request body is larger than ${deps.maxBodyBytes} bytes.`, {
        hint: `Send at most ${deps.maxBodyBytes} bytes in one MCP message.`,
      })
    },
  })
  const publicOrigin = new URL(deps.publicUrl).origin
  app.all('/mcp', limitBody, async (context) => {
    assertTrustedOrigin(context.req.header('origin'), publicOrigin)
    if (context.req.method !== 'POST') {
      // Stateless: no server-initiated stream (GET) and no session to end (DELETE), as the spec allows.
      throw new ToolError('method_not_allowed', `${context.req.method} is not supported on /mcp.`, {
        hint: 'Send MCP JSON-RPC messages with POST /mcp (Streamable HTTP, stateless).',
        headers: { Allow: 'POST' },
      })
    }
    const workspace = parseWorkspace(context.req.query('workspace'))
    const server = createServer(context, entries, deps, workspace)
    const transport = new StreamableHTTPTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
    await server.connect(transport)
    try {
      return await transport.handleRequest(context)
    } catch (error) {
      // The transport reports JSON-RPC errors as HTTP exceptions carrying the JSON-RPC answer.
      if (error instanceof HTTPException && error.res) return error.res
      throw error
    } finally {
      await server.close()
    }
  })
}

/**
 * MCP asks servers to check Origin against DNS rebinding: a web page whose name resolves to
 * 127.0.0.1 could otherwise drive a local toolport that has no keys. Clients that are not browsers
 * send no Origin and are not affected.
 */
function assertTrustedOrigin(origin: string | undefined, publicOrigin: string): void {
  if (origin === undefined || origin === publicOrigin) return
  let host: string
  try {
    host = new URL(origin).hostname
  } catch {
    host = ''
  }
  if (isLoopbackHost(host)) return
  throw new ToolError('permission_denied', `Requests from origin ${JSON.stringify(origin)} are not allowed on /mcp.`, {
    hint: `Connect from ${publicOrigin}, or from a client that is not a web page.`,
  })
}

function parseWorkspace(value: string | undefined): string {
  const parsed = WorkspaceId.safeParse(value)
  if (parsed.success) return parsed.data
  throw new ToolError('validation', `Invalid workspace ${JSON.stringify(value)}.`, {
    hint: 'Use a workspace id of 1 to 64 characters from A-Z, a-z, 0-9, ".", "_" and "-", not only dots.',
    details: { field: 'workspace' },
  })
}

function createServer(
  context: Context<AppEnv>,
  entries: ReadonlyMap<string, McpEntry>,
  deps: McpRouteDeps,
  workspaceId: string,
): McpServer {
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
      const output = await invokeTool({
        tool: entry.tool,
        input: parseInput(entry, request.params.arguments ?? {}),
        principal,
        workspaceId,
        storage: deps.storage,
        limits: deps.limits,
        log: deps.log,
        services: deps.services,
        signal: AbortSignal.any([context.req.raw.signal, extra.signal]),
      })
      return {
        structuredContent: output as Record<string, unknown>,
        content: [{ type: 'text', text: JSON.stringify(output) }, ...fileLinks(output)],
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
