import type { CallToolResult, Task } from '@modelcontextprotocol/sdk/types.js'
import type { Context } from 'hono'
import type { Principal } from '../../auth/principal'
import type { AdmittedCall, Call, Disconnect } from '../../caller/call'
import { disconnectOf } from '../../caller/call'
import type { Caller } from '../../caller/caller'
import { isToolError, ToolError } from '../../core/errors'
import type { Logger } from '../../core/logger'
import type { TraceCarrier } from '../../core/tracing'
import { jobStatusUrl, publicJob } from '../../jobs/types'
import type { ClientChannel, LogLevel, ToolEvent } from '../../tools/tool'
import { labelCall } from '../call-facts'
import type { AppEnv } from '../env'
import { problemBody } from '../problem'
import { pendingResult } from './approvals'
import { handedOver, resultOf } from './content'
import { taskOf } from './tasks'

/** One tools/call as either protocol era's server hands it over. */
export interface McpCallRequest {
  name: string
  arguments: Record<string, unknown> | undefined
  progressToken: string | number | undefined
  /**
   * How the answer may be a task: `requested` (2025-11-25: the client asked with `task`, the answer is
   * one at once), `allowed` (2026-07-28 Tasks extension: the server may answer a call that outlives the
   * synchronous limit with one), or `none`.
   */
  task: 'requested' | 'allowed' | 'none'
  /** The request's `_meta` traceparent and tracestate (the MCP spec's keys), if it carries them. */
  trace?: TraceCarrier | undefined
  /** The JSON-RPC id of the tools/call, for gen_ai.tool.call.id. */
  id?: string | number | undefined
}

/** The era's way to reach the client mid-call: notifications on the answer's stream, requests. */
export interface ClientLink {
  /** Aborts when the client cancels the call or goes away (its request, or a parked call's deadline). */
  signal: AbortSignal
  /** How the call hears its client go away, where the transport has a cheaper way than `signal` (REST's). */
  disconnect?: Disconnect | undefined
  /** Whether notifications and requests can reach the client before the answer ends (an event stream, or MRTR). */
  live: boolean
  notify(method: 'notifications/progress' | 'notifications/message', params: Record<string, unknown>): Promise<void>
  /** A request to the client (sampling, elicitation): over the stream (2025) or as input_required (2026). */
  ask(method: string, params: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>>
  /** What the client declared it can answer; undefined where the version does not tell (stateless 2025). */
  capabilities: Record<string, unknown> | undefined
  /** The least severe log message the client wants (2026-07-28 `_meta` logLevel); default: all. */
  logLevel: LogLevel | undefined
}

export interface McpCallContext {
  context: Context<AppEnv>
  caller: Caller
  log: Logger
  principal: Principal
  workspaceId: string
  /** The protocol version the client negotiated. */
  version: string
}

/** What a tools/call is answered with, besides a result: a protocol error, or a task. */
export type McpCallAnswer =
  | { result: CallToolResult }
  | { task: Task }
  | { error: { code: number; message: string; data?: unknown } }

// A progress notification at least this often keeps a client that resets its timeout on progress waiting.
const heartbeatMs = 5_000

const levels: readonly LogLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']

/** JSON-RPC's invalid params, which an unknown tool and a refused task request are. */
const invalidParams = -32602

/**
 * tools/call, by what the client asked for, for both protocol eras (session.ts, modern.ts):
 * - a task (2025-11-25 `task`): the call is submitted as a job and answered with its task at once;
 * - with a progressToken: the call runs to its end, with a progress notification at least every 5 s
 *   (and one per output chunk), so a client that resets its timeout on progress waits;
 * - otherwise: as a synchronous REST call, handed over to a job once it outlives the synchronous limit,
 *   answered with its task (2026-07-28 Tasks extension) or with what to call next: the work is never
 *   stopped because a client's request timed out.
 * A failed call is a result the model reads (isError), not a protocol error, so it can correct the call.
 * An MCP source's own result (its blocks, its isError) reaches the client as the server wrote it.
 */
export async function callTool(request: McpCallRequest, link: ClientLink, mcp: McpCallContext): Promise<McpCallAnswer> {
  const { context, caller } = mcp
  let call: Call
  let known = false
  try {
    call = await caller.prepare({
      principal: mcp.principal,
      tool: request.name,
      readInput: () => request.arguments ?? {},
      workspaceId: mcp.workspaceId,
      origin: context.get('linkOrigin'),
      inlineImages: true,
      trace: request.trace,
      callId: request.id === undefined ? undefined : String(request.id),
      requestId: context.get('requestId'),
      found: (entry) => {
        known = true
        labelCall(context, entry)
      },
    })
  } catch (error) {
    // A tool the tenant's catalog does not hold is a protocol error; a refusal of a known tool is a result.
    if (isToolError(error) && error.code === 'not_found' && !known) {
      // The SDK's own wording, which clients match; the name meant, where there is one, after it.
      const meant = (error.details as { did_you_mean?: unknown } | undefined)?.did_you_mean
      const suggestion = typeof meant === 'string' ? `. Did you mean ${meant}?` : ''
      return { error: { code: invalidParams, message: `Unknown tool: ${request.name}${suggestion}` } }
    }
    return failed(error, request, mcp)
  }
  try {
    // A task must be answered with a task, and a gated call is answered with its pending approval: the
    // two cannot meet, so such a call is refused before any approval is asked for (tools/list says
    // taskSupport "forbidden" for it).
    if (request.task === 'requested' && call.needsApproval) {
      throw new ToolError(
        'validation',
        `${call.entry.name} waits for an approver for this key, so it cannot run as a task.`,
        {
          hint: 'Call it without "task": the answer is then its pending approval, which an approver decides.',
        },
      )
    }
    // The same gate as REST: a call this key's policy gates waits for an approver, as a normal result.
    const admission = await caller.admit(call)
    if (admission.kind === 'pending_approval') return { result: pendingResult(admission.pending) }
    if (admission.kind !== 'run') throw new Error('a call without dry_run was answered with its dry run')
    if (request.task === 'requested') {
      const outcome = await caller.run(admission.call, { mode: 'job' })
      if ('job' in outcome) return { task: taskOf(outcome.job) }
      return { result: resultOf(outcome.output, mcp.version, mcp.workspaceId) }
    }
    const disconnect = link.disconnect ?? disconnectOf(link.signal)
    const relay = clientRelay(link, request.progressToken)
    try {
      if (request.progressToken !== undefined) {
        const output = await withProgress(caller, admission.call, relay, disconnect)
        return { result: relay.native() ?? resultOf(output, mcp.version, mcp.workspaceId) }
      }
      const outcome = await caller.run(admission.call, {
        mode: 'sync',
        sourceHandOver: request.task === 'allowed',
        disconnect,
        client: relay.channel,
        ...(link.live ? { emit: relay.emit } : {}),
      })
      if ('output' in outcome)
        return { result: relay.native() ?? resultOf(outcome.output, mcp.version, mcp.workspaceId) }
      if (request.task === 'allowed') return { task: taskOf(outcome.job) }
      const origin = context.get('linkOrigin')
      return { result: handedOver(publicJob(outcome.job, jobStatusUrl(origin, outcome.job.id))) }
    } catch (error) {
      // An MCP source's own error result reaches the client as the server wrote it.
      const native = relay.native()
      if (native) return { result: native }
      throw error
    }
  } catch (error) {
    return failed(error, request, mcp)
  }
}

/**
 * A failed call is a result the model reads (isError), not a protocol error, so it can correct the call;
 * but a task request must get a task or a protocol error: a tool error result is neither (the SDK refuses
 * it as an invalid task creation result, and the client learns nothing).
 */
function failed(error: unknown, request: McpCallRequest, mcp: McpCallContext): McpCallAnswer {
  const problem = problemBody(error, mcp.context, mcp.log)
  if (request.task === 'requested') {
    return { error: { code: invalidParams, message: String(problem.detail), data: problem } }
  }
  return { result: { isError: true, content: [{ type: 'text', text: JSON.stringify(problem) }] } }
}

/** What one call's tool may send its client: progress, log messages, requests, its own MCP result. */
interface Relay {
  channel: ClientChannel
  emit: (event: ToolEvent) => void
  /** Progress with only a message (output, heartbeat): one step past the last. */
  step(message: string): void
  /** The MCP source's own result, when its tool gave one. */
  native(): CallToolResult | undefined
}

function clientRelay(link: ClientLink, token: string | number | undefined): Relay {
  let last = -1
  let native: CallToolResult | undefined
  const progress = (params: { progress: number; total?: number; message?: string }) => {
    if (token === undefined || !link.live) return
    // MCP requires progress to increase with every notification.
    if (params.progress <= last) return
    last = params.progress
    void link.notify('notifications/progress', { progressToken: token, ...params }).catch(() => {})
  }
  const log = (level: LogLevel, data: unknown, logger?: string) => {
    if (!link.live) return
    if (link.logLevel && levels.indexOf(level) < levels.indexOf(link.logLevel)) return
    void link
      .notify('notifications/message', { level, data, ...(logger !== undefined ? { logger } : {}) })
      .catch(() => {})
  }
  const step = (message: string) => progress({ progress: last + 1, message })
  const emit = (event: ToolEvent) => {
    if (event.type === 'progress') progress(event)
    else if (event.type === 'log') log(event.level, event.data, event.logger)
    else {
      step(event.text.slice(-500))
      log(event.stream === 'stderr' ? 'warning' : 'info', event.text, event.stream)
    }
  }
  const channel: ClientChannel = {
    // An answer that cannot reach the client before it ends asks it nothing; without a declaration (a
    // stateless 2025 request tells none), the client is asked and answers for itself.
    capabilities: link.live ? (link.capabilities ?? { sampling: {}, elicitation: {} }) : {},
    request(method, params, signal) {
      if (!link.live) throw new Error(`${method} cannot reach the client: this answer is not a stream.`)
      return link.ask(method, params, signal)
    },
    answer(result) {
      native = result as CallToolResult
    },
  }
  return { channel, emit, step, native: () => native }
}

/** The call with progress notifications: every output chunk, and a heartbeat while it is quiet. */
async function withProgress(
  caller: Caller,
  call: AdmittedCall,
  relay: Relay,
  disconnect: ReturnType<typeof disconnectOf>,
): Promise<unknown> {
  const started = Date.now()
  const heartbeat = setInterval(() => {
    relay.step(`${call.entry.name} is running (${Math.round((Date.now() - started) / 1000)} s)`)
  }, heartbeatMs)
  try {
    const outcome = await caller.run(call, { mode: 'now', disconnect, emit: relay.emit, client: relay.channel })
    return (outcome as { output: unknown }).output
  } finally {
    clearInterval(heartbeat)
  }
}

/** A request's `_meta` trace context (MCP carries W3C Trace Context as `traceparent` and `tracestate` there). */
export function metaCarrier(meta: Record<string, unknown> | undefined): TraceCarrier | undefined {
  const traceparent = meta?.traceparent
  if (typeof traceparent !== 'string') return undefined
  const tracestate = meta?.tracestate
  return { traceparent, ...(typeof tracestate === 'string' ? { tracestate } : {}) }
}
