import type { Task } from '@modelcontextprotocol/sdk/types.js'
import {
  type CallToolResult,
  createMcpHandler,
  inputRequired,
  type LoggingLevel,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  Server,
  type ServerContext,
  type ServerEventBus,
} from '@modelcontextprotocol/server'
import type { Context } from 'hono'
import { z } from 'zod'
import type { Principal } from '../../auth/principal'
import { isToolError } from '../../core/errors'
import type { Logger } from '../../core/logger'
import type { JobRecord } from '../../jobs/types'
import type { AppEnv } from '../env'
import { gatedListing } from './approvals'
import { type ClientLink, callTool, type McpCallAnswer, metaCarrier } from './call'
import { resultOf } from './content'
import { answerListen } from './listen'
import type { CallStep, ParkedCall, ParkedCalls } from './parked-calls'
import { listingOf, type McpAsk, type McpDeps, type McpState } from './state'
import { protocolFault, type SurfaceRequest } from './surface'
import { taskOf, taskPollMs } from './tasks'

/** The Tasks extension (SEP-2663) of 2026-07-28: tools/call may be answered with a task. */
const tasksExtension = 'io.modelcontextprotocol/tasks'
const protocolVersion = '2026-07-28'

/** How long a client may reuse a list (2026-07-28 cache hints); a catalog change shows after at most this. */
const listTtlMs = 30_000

type Ask = McpAsk

/** The params of the task methods; built once (a schema made per request was a tenth of a call's time). */
const taskId = { params: z.object({ taskId: z.string() }).passthrough() }

/**
 * MCP 2026-07-28 on the SDK's v2 server (`@modelcontextprotocol/server`): no initialize and no
 * session, every request carries its version, client info and capabilities in `_meta`, and the SDK
 * answers server/discover. Chosen over hand-written framing because it implements the envelope
 * validation, error codes, cache fields and multi round-trip results exactly, on Web-standard Request
 * and Response (Node, Lambda and Workers alike), and runs on Node 20; its 2025 serving is not used
 * (`legacy: 'reject'`): session.ts keeps serving 2024-11-05 to 2025-11-25 on SDK 1.x, whose task
 * runtime the 2.x line does not have. Both answer from the same call core (call.ts) and surface.
 */
/** Serves one 2026-07-28 request with the caller the route found. */
export interface ModernHandler {
  answer(ask: Ask, body: unknown): Promise<Response>
}

export function createModernHandler(state: McpState, deps: McpDeps): ModernHandler {
  const handlerOn = (bus?: ServerEventBus) =>
    createMcpHandler(
      (context) => {
        // The per-request caller rides on authInfo, which the SDK hands the factory untouched.
        const ask = (context.authInfo?.extra as { ask?: Ask } | undefined)?.ask
        if (!ask) throw new Error('an MCP request reached the 2026-07-28 server without its caller')
        return modernServer(state, deps, ask)
      },
      // 2025-era requests never reach this handler (session.ts routes them to SDK 1.x).
      { legacy: 'reject', ...(bus ? { bus } : {}) },
    )
  const handler = handlerOn()
  const fetchWith = (target: ReturnType<typeof handlerOn>, ask: Ask, body: unknown) =>
    target.fetch(ask.context.req.raw, {
      parsedBody: body,
      authInfo: { token: '', clientId: ask.principal.id, scopes: [], extra: { ask } },
    })
  return {
    answer: (ask, body) => {
      if ((body as { method?: unknown } | null)?.method !== 'subscriptions/listen') return fetchWith(handler, ask, body)
      return answerListen(
        {
          surface: state.surface,
          log: deps.log,
          handlerOn: (bus) => {
            const own = handlerOn(bus)
            return { fetch: (listen) => fetchWith(own, ask, listen), close: () => own.close() }
          },
        },
        ask,
        body,
      )
    },
  }
}

function modernServer(state: McpState, deps: McpDeps, ask: Ask): Server {
  const { caller, catalog } = deps
  const { principal, workspaceId, context } = ask
  const server = new Server(
    { name: 'toolport', version: deps.version },
    {
      capabilities: {
        tools: { listChanged: false },
        // Subscriptions through subscriptions/listen (listen.ts); lists are cacheable instead of changed.
        resources: { subscribe: true, listChanged: false },
        prompts: { listChanged: false },
        completions: {},
        extensions: { [tasksExtension]: {} },
      },
      cacheHints: {
        'tools/list': { ttlMs: listTtlMs, cacheScope: 'private' },
        'prompts/list': { ttlMs: listTtlMs, cacheScope: 'private' },
        'resources/templates/list': { ttlMs: listTtlMs, cacheScope: 'private' },
      },
    },
  )
  const surfaceOf = (ctx: ServerContext): SurfaceRequest => ({ principal, workspaceId, signal: ctx.mcpReq.signal })
  const answer = <T>(work: () => Promise<T>) => protocolErrors(work, context, deps.log)

  server.setRequestHandler('tools/list', async () => {
    const view = await catalog.view(principal)
    return {
      tools: view.entries.map((entry) => {
        const listed = listingOf(state, catalog, entry)
        return caller.needsApproval(principal, entry) ? gatedListing(listed) : listed
      }) as never,
      // Which catalog this list is: a client holding a list of the same revision has it already.
      _meta: { 'toolport/catalog_revision': view.revision },
    }
  })
  server.setRequestHandler('tools/call', (request, ctx) => modernCall(request.params, ctx, state, deps, ask))
  // The Tasks extension's methods, for clients that declare it on the request (-32021 otherwise); a
  // task is a job, so tasks/update has nothing to deliver: toolport's tasks never wait for input.
  server.setRequestHandler('tasks/get', taskId, async ({ taskId }, ctx) => {
    assertTasksDeclared(ctx)
    return detailedTask(await jobOf(deps, principal, taskId))
  })
  server.setRequestHandler('tasks/update', taskId, async ({ taskId }, ctx) => {
    assertTasksDeclared(ctx)
    await jobOf(deps, principal, taskId)
    return {}
  })
  server.setRequestHandler('tasks/cancel', taskId, async ({ taskId }, ctx) => {
    assertTasksDeclared(ctx)
    await jobOf(deps, principal, taskId)
    await caller.jobAccess.cancel(principal, taskId)
    return {}
  })
  server.setRequestHandler('resources/list', (request, ctx) =>
    answer(() => state.surface.listResources(surfaceOf(ctx), request.params?.cursor) as never),
  )
  server.setRequestHandler('resources/templates/list', (_request, ctx) =>
    answer(() => state.surface.listResourceTemplates(surfaceOf(ctx)) as never),
  )
  server.setRequestHandler('resources/read', (request, ctx) =>
    answer(async () => {
      try {
        return (await state.surface.readResource(surfaceOf(ctx), request.params.uri)) as never
      } catch (error) {
        if (isToolError(error) && error.code === 'not_found' && (error.details as { uri?: unknown })?.uri) {
          throw new ResourceNotFoundError(request.params.uri)
        }
        throw error
      }
    }),
  )
  server.setRequestHandler('prompts/list', (_request, ctx) =>
    answer(() => state.surface.listPrompts(surfaceOf(ctx)) as never),
  )
  server.setRequestHandler('prompts/get', (request, ctx) =>
    answer(() => state.surface.getPrompt(surfaceOf(ctx), request.params.name, request.params.arguments ?? {}) as never),
  )
  server.setRequestHandler('completion/complete', (request, ctx) =>
    answer(() => state.surface.complete(surfaceOf(ctx), request.params as never) as never),
  )
  return server
}

/**
 * tools/call on 2026-07-28: the same call core as 2025, where a tool's request to the client (an MCP
 * source's elicitation or sampling) becomes an `input_required` result and the call waits, parked, for
 * the client's retry with the answers (requestState names the call); a call that outlives the
 * synchronous limit is answered with its task when the client declared the Tasks extension.
 */
async function modernCall(
  params: {
    name: string
    arguments?: Record<string, unknown>
    _meta?: Record<string, unknown> & { progressToken?: string | number }
  },
  ctx: ServerContext,
  state: McpState,
  deps: McpDeps,
  ask: Ask,
) {
  const { principal } = ask
  const resumed = ctx.mcpReq.requestState()
  if (typeof resumed === 'string') {
    const parked = state.parkedCalls.find(resumed, principal)
    if (!parked) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid or expired requestState', {
        reason: 'invalid_request_state',
      })
    }
    for (const [key, value] of Object.entries(ctx.mcpReq.inputResponses ?? {})) parked.respond(key, value)
    return nextStep(parked, ctx, state.parkedCalls)
  }
  const envelope = (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>
  const capabilities = clientCapabilitiesOf(ctx)
  const parked = state.parkedCalls.start(principal)
  const link: ClientLink = {
    // The parked call's own: each request of it only cancels it while it waits on that request.
    signal: parked.abort.signal,
    live: true,
    notify: (method, notification) => ctx.mcpReq.notify({ method, params: notification } as never),
    ask: (method, request, signal) => parked.ask(method, request, signal),
    capabilities,
    logLevel: envelope['io.modelcontextprotocol/logLevel'] as LoggingLevel | undefined,
  }
  void callTool(
    {
      name: params.name,
      arguments: params.arguments,
      progressToken: params._meta?.progressToken,
      task: declaresTasks(capabilities) ? 'allowed' : 'none',
      trace: metaCarrier(params._meta),
      id: ctx.mcpReq.id,
    },
    link,
    {
      context: ask.context,
      caller: deps.caller,
      log: deps.log,
      principal,
      workspaceId: ask.workspaceId,
      version: protocolVersion,
    },
  ).then(
    (answer) => parked.finish(answer),
    (error: unknown) =>
      parked.finish({ error: { code: ProtocolErrorCode.InternalError, message: (error as Error).message } }),
  )
  return nextStep(parked, ctx, state.parkedCalls)
}

/**
 * The call's next step, as the answer to this request; the client cancelling this request (or going
 * away) while the call runs for it cancels the call, but not once the request was answered.
 */
async function nextStep(parked: ParkedCall, ctx: ServerContext, calls: ParkedCalls) {
  const cancel = () => parked.abort.abort(ctx.mcpReq.signal.reason ?? new Error('client disconnected'))
  if (ctx.mcpReq.signal.aborted) cancel()
  ctx.mcpReq.signal.addEventListener('abort', cancel, { once: true })
  try {
    return stepAnswer(await parked.next(), parked, calls)
  } finally {
    ctx.mcpReq.signal.removeEventListener('abort', cancel)
  }
}

function stepAnswer(step: CallStep, parked: ParkedCall, calls: ParkedCalls) {
  if (step.kind === 'ask') {
    calls.park(parked)
    return inputRequired({
      inputRequests: { [step.key]: { method: step.method, params: step.params } as never },
      requestState: parked.id,
    })
  }
  return answerOf(step.answer)
}

function answerOf(answer: McpCallAnswer) {
  if ('error' in answer) throw new ProtocolError(answer.error.code, answer.error.message, answer.error.data)
  if ('task' in answer) return { resultType: 'task', ...extensionTask(answer.task) } as never
  return answer.result as CallToolResult
}

/** What the client declared on this request (2026-07-28 carries it in every request's envelope). */
function clientCapabilitiesOf(ctx: ServerContext): Record<string, unknown> {
  const envelope = (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>
  return (envelope['io.modelcontextprotocol/clientCapabilities'] ?? {}) as Record<string, unknown>
}

function declaresTasks(capabilities: Record<string, unknown>): boolean {
  return tasksExtension in ((capabilities.extensions ?? {}) as Record<string, unknown>)
}

/** A task as the Tasks extension spells its fields (ttlMs, pollIntervalMs), from the 2025 Task shape. */
function extensionTask(task: Task) {
  const { ttl, pollInterval, ...rest } = task
  return { ...rest, ttlMs: ttl, pollIntervalMs: pollInterval ?? taskPollMs }
}

function assertTasksDeclared(ctx: ServerContext): void {
  if (declaresTasks(clientCapabilitiesOf(ctx))) return
  throw new ProtocolError(ProtocolErrorCode.MissingRequiredClientCapability, 'Missing required client capability', {
    requiredCapabilities: { extensions: { [tasksExtension]: {} } },
  })
}

async function jobOf(deps: McpDeps, principal: Principal, taskId: string): Promise<JobRecord> {
  const job = await deps.caller.jobAccess.get(principal, taskId)
  if (!job) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Task not found: ${taskId}`)
  return job
}

/**
 * A job as the Tasks extension's DetailedTask: a tool that failed still completed (its result is the
 * error result the model reads); `failed` is kept for JSON-RPC errors, which a job never ends with.
 */
function detailedTask(job: JobRecord) {
  const { statusMessage, ...base } = extensionTask(taskOf(job))
  if (job.status === 'succeeded')
    return { ...base, status: 'completed', result: resultOf(job.result, protocolVersion, job.workspace) }
  if (job.status === 'failed') {
    return {
      ...base,
      status: 'completed',
      ...(statusMessage ? { statusMessage } : {}),
      result: { isError: true, content: [{ type: 'text', text: JSON.stringify(job.error ?? {}) }] },
    }
  }
  return { ...base, ...(statusMessage ? { statusMessage } : {}) }
}

/** toolport's problems as protocol errors (surface.ts protocolFault), in the v2 SDK's error class. */
async function protocolErrors<T>(work: () => Promise<T>, context: Context<AppEnv>, log: Logger): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (error instanceof ProtocolError) throw error
    const fault = protocolFault(error, context, log)
    throw new ProtocolError(fault.code, fault.message, fault.data)
  }
}
