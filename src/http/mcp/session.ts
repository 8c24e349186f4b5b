export type { McpDeps, McpState } from './state'
export { mcpState } from './state'

import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
  ElicitResultSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  ResultSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js'
import type { InboundClassificationOutcome } from '@modelcontextprotocol/server'
import type { Context } from 'hono'
import { ToolError } from '../../core/errors'
import type { Logger } from '../../core/logger'
import type { AppEnv } from '../env'
import { gatedListing } from './approvals'
import { type ClientLink, callTool, metaCarrier } from './call'
import { randomRequestIdBase } from './client-requests'
import { directModernToolCall, directToolCall, modernVersion } from './direct-call'
import { sessionStream } from './session-stream'
import { listingOf, type McpDeps, type McpState } from './state'
import { protocolFault, resourceNotFound, type SurfaceRequest } from './surface'
import { jobTaskStore, taskPollMs } from './tasks'

/**
 * One MCP request (stateless: a fresh server and transport per POST, so any instance answers any
 * request), on the SDK's own Web-standard transport: 400 for an unsupported MCP-Protocol-Version, an
 * empty 202 for notifications and responses, JSON answers, or an event stream when the request asked
 * for progress or calls a tool that may talk to its client mid-call. Loaded by the /mcp route on its
 * first request: the MCP SDK is not part of a cold start.
 */
export async function answerMcp(
  context: Context<AppEnv>,
  state: McpState,
  deps: McpDeps,
  workspaceId: string,
  body: unknown,
): Promise<Response> {
  const { caller, catalog } = deps
  const principal = context.get('principal')
  // An answer to a request relayed to this client (sampling, elicitation) goes to the call that asked.
  if (state.clientRequests.deliver(principal, body)) return new Response(null, { status: 202 })
  // A plain 2026-07-28 tools/call is answered before the SDK classifies it: directModernToolCall checks
  // everything that classification would decide for such a message itself, and the SDK's schemas, tried
  // one after another on each message (their failures build issue lists), were about a tenth of the CPU
  // of a small call. Anything it does not take goes through the classification as before.
  if (
    context.req.raw.headers.get('mcp-protocol-version') === modernVersion &&
    !(await wantsStream(body, deps, principal))
  ) {
    const direct = await directModernToolCall(context, deps, workspaceId, body)
    if (direct) return direct
  }
  const modernEra = await modernRoute(state, context.req.raw, body)
  if (modernEra) {
    const modern = await import('./modern')
    state.modern ??= modern.createModernHandler(state, deps)
    return state.modern.answer({ context, principal, workspaceId }, body)
  }
  const streamed = await wantsStream(body, deps, principal)
  const direct = streamed ? undefined : await directToolCall(context, deps, workspaceId, body)
  if (direct) return direct
  const version =
    context.req.header('mcp-protocol-version') ?? initializeVersion(body) ?? DEFAULT_NEGOTIATED_PROTOCOL_VERSION
  const server = new Server(
    { name: 'toolport', version: deps.version },
    {
      // Only what is delivered: no list_changed; resource updates on the session's GET stream
      // (session-stream.ts); logging on a call's own stream.
      capabilities: {
        tools: { listChanged: false },
        resources: { subscribe: true, listChanged: false },
        prompts: { listChanged: false },
        completions: {},
        logging: {},
        tasks: { cancel: {}, requests: { tools: { call: {} } } },
      },
      taskStore: jobTaskStore(caller.jobAccess, principal, version),
      defaultTaskPollInterval: taskPollMs,
    },
  )
  // The SDK numbers a server's own requests from 0; each request's server starts elsewhere, so an
  // answer posted later finds its call in clientRequests (client-requests.ts).
  const internals = server as unknown as { _requestMessageId: number }
  internals._requestMessageId = randomRequestIdBase()
  const tasks = version >= '2025-11-25'
  const surfaceRequest: SurfaceRequest = { principal, workspaceId, signal: context.req.raw.signal }
  // The catalog only where it is answered: initialize, notifications, calls and tasks do without it.
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: (await catalog.view(principal)).entries.map((entry) => {
      const own = listingOf(state, catalog, entry)
      // A key whose calls of this tool wait for approval may get a pending approval instead of the output.
      const gated = caller.needsApproval(principal, entry)
      const listed = gated ? gatedListing(own) : own
      if (!tasks) return listed
      // A gated call is answered with its pending approval, never with a task (mcp/call.ts).
      return { ...listed, execution: { taskSupport: gated ? ('forbidden' as const) : ('optional' as const) } }
    }),
  }))
  let transport: WebStandardStreamableHTTPServerTransport | undefined
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const link: ClientLink = {
      signal: AbortSignal.any([context.req.raw.signal, extra.signal]),
      live: streamed,
      notify: (method, params) => extra.sendNotification({ method, params } as never),
      // Each relayed request is awaited under its id, so the client's later POST can answer it.
      ask: (method, params, signal) => {
        const done = state.clientRequests.expect(internals._requestMessageId, principal, (message) =>
          transport?.onmessage?.(message),
        )
        return extra
          .sendRequest({ method, params } as never, resultSchemaOf(method), {
            signal,
            timeout: clientRequestTimeoutMs,
          })
          .finally(done) as Promise<Record<string, unknown>>
      },
      capabilities: undefined,
      logLevel: undefined,
    }
    const answer = await callTool(
      {
        name: request.params.name,
        arguments: request.params.arguments,
        progressToken: request.params._meta?.progressToken,
        task: request.params.task ? 'requested' : 'none',
        trace: metaCarrier(request.params._meta),
        id: extra.requestId,
      },
      link,
      { context, caller, log: deps.log, principal, workspaceId, version },
    )
    if ('error' in answer) throw new McpError(answer.error.code, answer.error.message, answer.error.data)
    if ('task' in answer) return { task: answer.task }
    return answer.result
  })
  const answer = <T>(work: () => Promise<T>) => protocolErrors(work, context, deps.log)
  const { surface } = state
  server.setRequestHandler(ListResourcesRequestSchema, (request) =>
    answer(() => surface.listResources(surfaceRequest, request.params?.cursor) as never),
  )
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () =>
    answer(() => surface.listResourceTemplates(surfaceRequest) as never),
  )
  server.setRequestHandler(ReadResourceRequestSchema, (request) =>
    answer(() => surface.readResource(surfaceRequest, request.params.uri) as never),
  )
  server.setRequestHandler(ListPromptsRequestSchema, () => answer(() => surface.listPrompts(surfaceRequest) as never))
  server.setRequestHandler(GetPromptRequestSchema, (request) =>
    answer(() => surface.getPrompt(surfaceRequest, request.params.name, request.params.arguments ?? {}) as never),
  )
  server.setRequestHandler(CompleteRequestSchema, (request) =>
    answer(() => surface.complete(surfaceRequest, request.params as never) as never),
  )
  // A subscription is kept in the session initialize opened, at the version the resource has now; the
  // session's GET stream tells when that changes.
  const sessionId = context.req.header('mcp-session-id')
  const subscribing = async (uri: string) => {
    if (!sessionId) throw sessionless()
    return state.surface.versionOf(surfaceRequest, uri)
  }
  server.setRequestHandler(SubscribeRequestSchema, (request) =>
    answer(async () => {
      const version = await subscribing(request.params.uri)
      await state.sessions.subscribe(principal, sessionId as string, request.params.uri, version)
      return {}
    }),
  )
  server.setRequestHandler(UnsubscribeRequestSchema, (request) =>
    answer(async () => {
      if (!sessionId) throw sessionless()
      await state.sessions.unsubscribe(principal, sessionId, request.params.uri)
      return {}
    }),
  )
  // Stateless: there is no session to keep a level in. Accepted so clients that set one go on; each
  // call's stream carries every message (2026-07-28 clients send their level with each request).
  server.setRequestHandler(SetLevelRequestSchema, async () => ({}))
  transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    // An event stream only where it carries something: progress, log messages, relayed requests.
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
  if (response.ok && initializeVersion(body) !== undefined) {
    // The session a client's subscriptions and GET stream are kept under (sessions.ts).
    response = withHeader(response, 'mcp-session-id', await state.sessions.open(principal))
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

/**
 * GET and DELETE of a 2025 session (the route sends only those that name one): the session's standing
 * stream of resource updates, and its end. 404 for a session that ended, expired or is another key's:
 * the client starts a new one with initialize.
 */
export async function answerSessionRequest(
  context: Context<AppEnv>,
  state: McpState,
  deps: McpDeps,
  workspaceId: string,
  sessionId: string,
): Promise<Response> {
  const principal = context.get('principal')
  if (context.req.method === 'DELETE') {
    await state.sessions.end(principal, sessionId)
    return new Response(null, { status: 204 })
  }
  if (!/\btext\/event-stream\b/.test(context.req.header('accept') ?? '')) {
    throw new ToolError('validation', "A session's GET stream is an event stream.", {
      hint: 'Send Accept: text/event-stream.',
    })
  }
  await state.sessions.load(principal, sessionId)
  return sessionStream(
    { sessions: state.sessions, surface: state.surface, log: deps.log },
    { principal, workspaceId, sessionId, signal: context.req.raw.signal },
  )
}

function sessionless(): McpError {
  return new McpError(-32602, 'Subscriptions are kept in a session: this request carries no Mcp-Session-Id header.', {
    hint: "Send the Mcp-Session-Id header initialize's answer carried with every request of the session.",
  })
}

function withHeader(response: Response, name: string, value: string): Response {
  const headers = new Headers(response.headers)
  headers.set(name, value)
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers })
}

// How long a relayed request (an upstream's sampling or elicitation) may wait for the client: a person
// may be answering it.
const clientRequestTimeoutMs = 10 * 60_000

function resultSchemaOf(method: string): typeof ResultSchema {
  if (method === 'sampling/createMessage') return CreateMessageResultSchema as unknown as typeof ResultSchema
  if (method === 'elicitation/create') return ElicitResultSchema as unknown as typeof ResultSchema
  return ResultSchema
}

/** toolport's problems as MCP protocol errors (surface.ts protocolFault), in SDK 1.x's error class. */
async function protocolErrors<T>(work: () => Promise<T>, context: Context<AppEnv>, log: Logger): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (error instanceof McpError) throw error
    // 2025 versions answer a missing resource with MCP's -32002.
    const fault = protocolFault(error, context, log, { resourceNotFound })
    throw new McpError(fault.code, fault.message, fault.data)
  }
}

/**
 * Whether a request speaks 2026-07-28 (or claims a later revision, which that server refuses in its
 * own words): the v2 SDK's own classification decides (isLegacyRequest is the same call on the
 * request's headers), asked only where a claim could be, so the 2025 path does not load the v2 SDK,
 * and made once: false for the 2025 era, else the SDK's route (a modern request, or the refusal the
 * SDK answers), which the direct call reuses.
 */
async function modernRoute(
  state: McpState,
  request: Request,
  body: unknown,
): Promise<false | { route?: InboundClassificationOutcome }> {
  const header = request.headers.get('mcp-protocol-version')
  const claims =
    (header !== null && header >= '2026-07-28') ||
    (Array.isArray(body) ? body : [body]).some(
      (message) =>
        (message as { params?: { _meta?: Record<string, unknown> } } | null)?.params?._meta?.[
          'io.modelcontextprotocol/protocolVersion'
        ] !== undefined,
    )
  if (!claims) return false
  // No parsed body: the SDK reads the request's own.
  if (body === undefined) {
    const { isLegacyRequest } = await import('@modelcontextprotocol/server')
    return (await isLegacyRequest(request, body)) ? false : {}
  }
  // Kept once loaded: a dynamic import() per request costs a trip through the module loader.
  state.classify ??= (await import('@modelcontextprotocol/server')).classifyInboundRequest
  const route = state.classify({
    httpMethod: request.method,
    body,
    protocolVersionHeader: request.headers.get('mcp-protocol-version') ?? undefined,
    mcpMethodHeader: request.headers.get('mcp-method') ?? undefined,
    mcpNameHeader: request.headers.get('mcp-name') ?? undefined,
  })
  return route.kind === 'legacy' ? false : { route }
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

/**
 * Whether the answer should be an event stream: a tools/call asking for progress, or calling a tool
 * that may send its client log messages or requests mid-call (an MCP source's).
 */
async function wantsStream(body: unknown, deps: McpDeps, principal: AppEnv['Variables']['principal']) {
  const messages = Array.isArray(body) ? body : [body]
  for (const message of messages) {
    const candidate = message as {
      method?: unknown
      params?: { name?: unknown; _meta?: { progressToken?: unknown }; task?: unknown }
    } | null
    if (candidate?.method !== 'tools/call' || candidate.params?.task !== undefined) continue
    if (candidate.params?._meta?.progressToken !== undefined) return true
    if (typeof candidate.params?.name !== 'string') continue
    const entry = await deps.catalog.resolve(principal.tenant, candidate.params.name).catch(() => undefined)
    if (entry?.tool.relaysClient) return true
  }
  return false
}
