import { CallToolRequestSchema, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js'
import type { Context } from 'hono'
import { requestDisconnect } from '../call-facts'
import type { AppEnv } from '../env'
import { type ClientLink, callTool, type McpCallAnswer, metaCarrier } from './call'
import type { McpDeps } from './state'

const envelopeKeys = new Set(['jsonrpc', 'id', 'method', 'params'])
export const modernVersion = '2026-07-28'
const tasksExtension = 'io.modelcontextprotocol/tasks'
/** The 2026-07-28 per-request envelope a direct call may carry in `params._meta`, and nothing else. */
const modernMetaKeys = new Set([
  'io.modelcontextprotocol/protocolVersion',
  'io.modelcontextprotocol/clientInfo',
  'io.modelcontextprotocol/clientCapabilities',
  'traceparent',
  'tracestate',
])

type CallParams = { name: string; arguments?: Record<string, unknown> | undefined; _meta?: Record<string, unknown> }

/**
 * A 2025-era tools/call that needs nothing of a server but its answer: one request (not a batch), no
 * task, and an answer that is one JSON body, not a stream (the caller asked session.ts's wantsStream).
 * That is how today's clients call tools, and building an SDK Server with its twenty handlers and a
 * transport for it cost most of such a call (bench/call-paths.ts). Answered here by the same call core
 * as the SDK's handler (call.ts), with the SDK's own request schema; anything else, or anything this
 * path would answer differently (a version, Accept or message the transport refuses), goes to the SDK
 * (undefined). mcp.test.ts and the conformance suite run through both.
 */
export async function directToolCall(
  context: Context<AppEnv>,
  deps: McpDeps,
  workspaceId: string,
  body: unknown,
): Promise<Response | undefined> {
  const plain = plainCall(context, body)
  if (!plain) return undefined
  // The transport's own refusals (406, 400) stay the transport's.
  const version = context.req.header('mcp-protocol-version')
  if (version === undefined || !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return undefined
  const parsed = CallToolRequestSchema.safeParse(body)
  if (!parsed.success) return undefined
  const { params } = parsed.data
  // A call whose answer is a stream (progress, a tool that talks to its client) never comes here (session.ts).
  if (params.task !== undefined) return undefined
  const answer = await answered(context, deps, workspaceId, plain.id, params, version)
  return json(
    'error' in answer
      ? { jsonrpc: '2.0', id: plain.id, error: answer.error }
      : { jsonrpc: '2.0', id: plain.id, result: 'task' in answer ? { task: answer.task } : answer.result },
  )
}

/**
 * The same for MCP 2026-07-28, whose v2 SDK handler builds a Server per request and checks the envelope
 * with zod (45% of REST's requests per second, bench/call-paths.ts). Only a call the SDK would answer
 * exactly so comes here, and it comes before the SDK classifies it (session.ts), so everything that
 * classification would decide of it is checked here: one JSON-RPC tools/call request (no batch, nothing
 * but its envelope, a string or number id); the
 * MCP-Protocol-Version, Mcp-Method and Mcp-Name headers name the body's version, method and tool plainly
 * (an encoded or missing header, any disagreement: the SDK's refusal); the envelope holds a version,
 * clientInfo and capabilities of the right shapes and nothing else (no progress token, log level, input
 * responses or request state: a resumed call); no Tasks extension declared (the call might be answered
 * with a task). The result is stamped as the SDK stamps one: `resultType: "complete"` and the server's
 * identity under `_meta`. test/contract/mcp-2026.test.ts checks both paths answer the same.
 */
export async function directModernToolCall(
  context: Context<AppEnv>,
  deps: McpDeps,
  workspaceId: string,
  body: unknown,
): Promise<Response | undefined> {
  const plain = plainCall(context, body)
  if (!plain) return undefined
  const headers = context.req.raw.headers
  const params = plain.message.params as Record<string, unknown> | undefined
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return undefined
  for (const key in params) if (key !== 'name' && key !== 'arguments' && key !== '_meta') return undefined
  if (typeof params.name !== 'string') return undefined
  if (headers.get('mcp-protocol-version') !== modernVersion || headers.get('mcp-method') !== 'tools/call') {
    return undefined
  }
  if (headers.get('mcp-name') !== params.name) return undefined
  const meta = params._meta as Record<string, unknown> | undefined
  if (!isObject(meta) || !plainEnvelope(meta)) return undefined
  // What the SDK's CallToolRequest schema would check of these three keys, checked here.
  if (params.arguments !== undefined && !isObject(params.arguments)) return undefined
  const call: CallParams = {
    name: params.name,
    ...(params.arguments !== undefined ? { arguments: params.arguments } : {}),
    _meta: meta,
  }
  const answer = await answered(context, deps, workspaceId, plain.id, call, modernVersion)
  if ('error' in answer) return json({ jsonrpc: '2.0', id: plain.id, error: answer.error })
  // A call made with task 'none' is never answered with a task (call.ts); kept from the type alone.
  if (!('result' in answer))
    return json({ jsonrpc: '2.0', id: plain.id, error: { code: -32603, message: 'Internal error' } })
  // As the SDK's encoder stamps a result of 2026-07-28 (a tools/call result is always "complete").
  const result = answer.result as Record<string, unknown>
  const serverInfo = { name: 'toolport', version: deps.version }
  const ownMeta = result._meta as Record<string, unknown> | undefined
  const stamped = {
    ...result,
    resultType: 'complete',
    _meta: {
      ...ownMeta,
      'io.modelcontextprotocol/serverInfo': ownMeta?.['io.modelcontextprotocol/serverInfo'] ?? serverInfo,
    },
  }
  return json({ jsonrpc: '2.0', id: plain.id, result: stamped })
}

/** One JSON-RPC tools/call request with nothing but its envelope, asking for JSON (or either). */
function plainCall(
  context: Context<AppEnv>,
  body: unknown,
): { id: string | number; message: Record<string, unknown> } | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined
  const message = body as Record<string, unknown>
  if (message.method !== 'tools/call' || message.jsonrpc !== '2.0') return undefined
  const id = message.id
  if (typeof id !== 'number' && typeof id !== 'string') return undefined
  for (const key in message) if (!envelopeKeys.has(key)) return undefined
  const accept = context.req.header('accept') ?? ''
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return undefined
  return { id, message }
}

/** The 2026-07-28 envelope of a plain call: the three required claims, well formed, and trace context. */
function plainEnvelope(meta: Record<string, unknown>): boolean {
  for (const key in meta) if (!modernMetaKeys.has(key)) return false
  if (meta['io.modelcontextprotocol/protocolVersion'] !== modernVersion) return false
  for (const key of ['traceparent', 'tracestate'])
    if (meta[key] !== undefined && typeof meta[key] !== 'string') return false
  const client = meta['io.modelcontextprotocol/clientInfo']
  if (!isObject(client) || typeof client.name !== 'string' || typeof client.version !== 'string') return false
  const capabilities = meta['io.modelcontextprotocol/clientCapabilities']
  if (!isObject(capabilities)) return false
  // A client declaring the Tasks extension may be answered with a task: the SDK's to answer.
  const extensions = capabilities.extensions
  return extensions === undefined || (isObject(extensions) && !(tasksExtension in extensions))
}

/** The call core's answer to one call, or the error a thrown handler gets from the SDK's Protocol. */
async function answered(
  context: Context<AppEnv>,
  deps: McpDeps,
  workspaceId: string,
  id: string | number,
  params: CallParams,
  version: string,
): Promise<McpCallAnswer> {
  const link: ClientLink = {
    // Read only if something asks: on Node the response's close tells of a client gone, for less.
    get signal() {
      return context.req.raw.signal
    },
    disconnect: requestDisconnect(context),
    live: false,
    notify: async () => {},
    ask: () => Promise.reject(new Error('this answer is not a stream')),
    capabilities: undefined,
    logLevel: undefined,
  }
  try {
    return await callTool(
      {
        name: params.name,
        arguments: params.arguments,
        progressToken: undefined,
        task: 'none',
        trace: metaCarrier(params._meta),
        id,
      },
      link,
      { context, caller: deps.caller, log: deps.log, principal: context.get('principal'), workspaceId, version },
    )
  } catch (error) {
    const thrown = error as { code?: unknown; message?: unknown; data?: unknown }
    return {
      error: {
        code: Number.isSafeInteger(thrown.code) ? (thrown.code as number) : -32603,
        message: typeof thrown.message === 'string' ? thrown.message : 'Internal error',
        ...(thrown.data !== undefined ? { data: thrown.data } : {}),
      },
    }
  }
}

function json(reply: unknown): Response {
  return new Response(JSON.stringify(reply), { status: 200, headers: { 'content-type': 'application/json' } })
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
