import { CallToolRequestSchema, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js'
import type { Context } from 'hono'
import { requestDisconnect } from '../call-facts'
import type { AppEnv } from '../env'
import { type ClientLink, callTool, metaCarrier } from './call'
import type { McpDeps } from './state'

const envelopeKeys = new Set(['jsonrpc', 'id', 'method', 'params'])

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
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined
  const message = body as Record<string, unknown>
  if (message.method !== 'tools/call' || message.jsonrpc !== '2.0') return undefined
  const id = message.id
  if (typeof id !== 'number' && typeof id !== 'string') return undefined
  for (const key in message) if (!envelopeKeys.has(key)) return undefined
  // The transport's own refusals (406, 400) stay the transport's.
  const version = context.req.header('mcp-protocol-version')
  if (version === undefined || !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return undefined
  const accept = context.req.header('accept') ?? ''
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return undefined
  const parsed = CallToolRequestSchema.safeParse(body)
  if (!parsed.success) return undefined
  const { params } = parsed.data
  // A call whose answer is a stream (progress, a tool that talks to its client) never comes here (session.ts).
  if (params.task !== undefined) return undefined
  const principal = context.get('principal')
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
  let reply: Record<string, unknown>
  try {
    const answer = await callTool(
      {
        name: params.name,
        arguments: params.arguments,
        progressToken: undefined,
        task: 'none',
        trace: metaCarrier(params._meta),
        id,
      },
      link,
      { context, caller: deps.caller, log: deps.log, principal, workspaceId, version },
    )
    reply =
      'error' in answer
        ? { jsonrpc: '2.0', id, error: answer.error }
        : { jsonrpc: '2.0', id, result: 'task' in answer ? { task: answer.task } : answer.result }
  } catch (error) {
    // As the SDK's Protocol answers a handler that threw.
    const thrown = error as { code?: unknown; message?: unknown; data?: unknown }
    reply = {
      jsonrpc: '2.0',
      id,
      error: {
        code: Number.isSafeInteger(thrown.code) ? thrown.code : -32603,
        message: typeof thrown.message === 'string' ? thrown.message : 'Internal error',
        ...(thrown.data !== undefined ? { data: thrown.data } : {}),
      },
    }
  }
  return new Response(JSON.stringify(reply), { status: 200, headers: { 'content-type': 'application/json' } })
}
