import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Principal } from '../../auth/principal'
import { ToolError } from '../../core/errors'
import { isLoopbackHost } from '../../core/loopback'
import { assertCleanJson, readUtf8Body } from '../body'
import type { AppEnv } from '../env'
import type { McpDeps, McpState } from '../mcp/state'
import { limitBody } from '../middleware/body-limit'
import { assertKnownQuery } from '../query'
import { parseWorkspace } from '../workspace-param'

export interface McpRouteDeps extends McpDeps {
  maxBodyBytes: number
  /** The service's public URL: browsers may call /mcp only from its origin (or from loopback). */
  publicUrl: string
}

/**
 * MCP over Streamable HTTP, stateless at heart: every POST gets a fresh server and transport, so any
 * instance behind a load balancer can answer any request and nothing outlives the call; a 2025
 * session keeps only its resource subscriptions, in the bucket (mcp/sessions.ts). Calls go through the
 * same caller as REST, with the principal the auth middleware found and `?workspace=`.
 */
export function registerMcpRoute(app: OpenAPIHono<AppEnv>, deps: McpRouteDeps): void {
  // Built on the first MCP request, with the SDK: neither is needed to serve REST calls.
  let state: McpState | undefined
  const limitedBody = limitBody(deps.maxBodyBytes, `Send at most ${deps.maxBodyBytes} bytes in one MCP message.`)
  const publicOrigin = new URL(deps.publicUrl).origin
  app.all('/mcp', limitedBody, async (context) => {
    assertTrustedOrigin(context.req.header('origin'), publicOrigin)
    const sessionId = context.req.header('mcp-session-id')
    const sessionRequest = (context.req.method === 'GET' || context.req.method === 'DELETE') && sessionId !== undefined
    if (context.req.method !== 'POST' && !sessionRequest) {
      // Without a session there is no server-initiated stream (GET) and nothing to end (DELETE).
      throw new ToolError('method_not_allowed', `${context.req.method} is not supported on /mcp without a session.`, {
        hint: 'Send MCP JSON-RPC messages with POST /mcp (Streamable HTTP); GET and DELETE take the Mcp-Session-Id initialize answered with.',
        headers: { Allow: 'POST' },
      })
    }
    assertKnownQuery(context.req.url, ['workspace'])
    const workspace = parseWorkspace(context.req.query('workspace') ?? context.get('principal').defaultWorkspace)
    const session = await import('../mcp/session')
    state ??= session.mcpState(deps)
    if (sessionRequest) return session.answerSessionRequest(context, state, deps, workspace, sessionId)
    // Read here (the body limit applies) so the session can see what the request asks for before it answers.
    const json = /^application\/json\b/i.test(context.req.header('content-type') ?? '')
    let body: unknown
    if (json) {
      const failed = (code: number, message: string) =>
        context.json({ jsonrpc: '2.0', id: null, error: { code, message } }, 400)
      let text: string
      try {
        text = await readUtf8Body(context)
      } catch {
        return failed(-32700, 'Parse error: the body is not UTF-8.')
      }
      try {
        body = JSON.parse(text)
      } catch {
        return failed(-32700, 'Parse error: the body is not JSON.')
      }
      try {
        assertCleanJson(text, body)
      } catch (error) {
        return failed(-32600, `Invalid Request: ${(error as Error).message}`)
      }
      const batchProblem = Array.isArray(body) ? batchProblemOf(body) : undefined
      if (batchProblem) return failed(-32600, `Invalid Request: ${batchProblem}`)
      await assertTokenScope(deps, context.get('principal'), body)
    }
    return session.answerMcp(context, state, deps, workspace, body)
  })
}

/**
 * MCP authorization's step-up: a token calling a tool its scopes do not reach gets HTTP 403 with
 * `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"` (problem.ts), so its client can ask
 * the person for that scope, rather than a tool error it could only show. Keys keep the tool error.
 */
async function assertTokenScope(deps: McpRouteDeps, principal: Principal, body: unknown): Promise<void> {
  if (!principal.oauth || typeof body !== 'object' || body === null || Array.isArray(body)) return
  const message = body as { method?: unknown; params?: { name?: unknown } }
  if (message.method !== 'tools/call' || typeof message.params?.name !== 'string') return
  try {
    await deps.caller.assertAllowed(principal, message.params.name)
  } catch (error) {
    // Only the missing scope is answered here; anything else (an unknown tool) is MCP's to answer.
    if (error instanceof ToolError && error.details?.error === 'insufficient_scope') throw error
  }
}

/**
 * What makes a JSON-RPC batch unanswerable as a whole: no message at all (JSON-RPC 2.0 answers an
 * empty array with one Invalid Request), or two requests sharing an id, whose answers the client could
 * not tell apart (the SDK kept one; both calls had run).
 */
function batchProblemOf(batch: unknown[]): string | undefined {
  if (batch.length === 0) return 'the batch is empty.'
  const ids = new Set<string>()
  for (const message of batch) {
    const id = (message as { id?: unknown } | null)?.id
    if (id === undefined || id === null) continue
    const key = `${typeof id}:${String(id)}`
    if (ids.has(key)) return `the id ${JSON.stringify(id)} is used by two requests of the batch; give each its own.`
    ids.add(key)
  }
  return undefined
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
