import type { CallToolRequest, CallToolResult, CreateTaskResult } from '@modelcontextprotocol/sdk/types.js'
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import type { Context } from 'hono'
import type { Principal } from '../../auth/principal'
import type { AdmittedCall, Call } from '../../caller/call'
import { disconnectOf } from '../../caller/call'
import type { Caller } from '../../caller/caller'
import { isToolError, ToolError } from '../../core/errors'
import type { Logger } from '../../core/logger'
import { jobStatusUrl, publicJob } from '../../jobs/types'
import type { ToolEvent } from '../../tools/tool'
import { labelCall } from '../call-facts'
import type { AppEnv } from '../env'
import { problemBody } from '../problem'
import { pendingResult } from './approvals'
import { handedOver, resultOf } from './content'
import { taskOf } from './tasks'

export interface McpCallContext {
  context: Context<AppEnv>
  caller: Caller
  log: Logger
  principal: Principal
  workspaceId: string
  /** The protocol version the client negotiated (its MCP-Protocol-Version header). */
  version: string
}

// A progress notification at least this often keeps a client that resets its timeout on progress waiting.
const heartbeatMs = 5_000

type Extra = {
  signal: AbortSignal
  sendNotification: (notification: {
    method: 'notifications/progress'
    params: Record<string, unknown>
  }) => Promise<void>
}

/**
 * tools/call, by what the client asked for:
 * - with `task` (MCP tasks, 2025-11-25): the call is submitted as a job and answered with its task at once;
 * - with a progressToken: the call runs to its end on an event stream, with a progress notification at
 *   least every 5 s (and one per output chunk), so a client that resets its timeout on progress waits;
 * - otherwise: as a synchronous REST call, handed over to a job once it outlives the synchronous limit,
 *   answered with what to call next: the work is never stopped because a client's request timed out.
 * A failed call is a result the model reads (isError), not a protocol error, so it can correct the call.
 */
export async function callTool(
  request: CallToolRequest,
  extra: Extra,
  mcp: McpCallContext,
): Promise<CallToolResult | CreateTaskResult> {
  const { context, caller } = mcp
  let call: Call
  let known = false
  try {
    call = await caller.prepare({
      principal: mcp.principal,
      tool: request.params.name,
      readInput: () => request.params.arguments ?? {},
      workspaceId: mcp.workspaceId,
      origin: context.get('linkOrigin'),
      inlineImages: true,
      found: (entry) => {
        known = true
        labelCall(context, entry)
      },
    })
  } catch (error) {
    // A tool the tenant's catalog does not hold is a protocol error; a refusal of a known tool is a result.
    if (isToolError(error) && error.code === 'not_found' && !known) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`)
    }
    return failed(error, request, mcp)
  }
  try {
    // A task must be answered with a task, and a gated call is answered with its pending approval: the
    // two cannot meet, so such a call is refused before any approval is asked for (tools/list says
    // taskSupport "forbidden" for it).
    if (request.params.task && call.needsApproval) {
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
    if (admission.kind === 'pending_approval') return pendingResult(admission.pending)
    if (admission.kind !== 'run') throw new Error('a call without dry_run was answered with its dry run')
    if (request.params.task) {
      const outcome = await caller.run(admission.call, { mode: 'job' })
      if ('job' in outcome) return { task: taskOf(outcome.job) }
      return resultOf(outcome.output, mcp.version)
    }
    const disconnect = disconnectOf(AbortSignal.any([context.req.raw.signal, extra.signal]))
    const token = request.params._meta?.progressToken
    if (token !== undefined) {
      return resultOf(await withProgress(caller, admission.call, token, extra, disconnect), mcp.version)
    }
    const outcome = await caller.run(admission.call, { mode: 'sync', disconnect })
    if ('output' in outcome) return resultOf(outcome.output, mcp.version)
    const origin = context.get('linkOrigin')
    return handedOver(publicJob(outcome.job, jobStatusUrl(origin, outcome.job.id)))
  } catch (error) {
    return failed(error, request, mcp)
  }
}

/**
 * A failed call is a result the model reads (isError), not a protocol error, so it can correct the call;
 * but a task request must get a task or a protocol error: a tool error result is neither (the SDK refuses
 * it as an invalid task creation result, and the client learns nothing).
 */
function failed(error: unknown, request: CallToolRequest, mcp: McpCallContext): CallToolResult {
  const problem = problemBody(error, mcp.context, mcp.log)
  if (request.params.task) throw new McpError(ErrorCode.InvalidParams, String(problem.detail), problem)
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(problem) }] }
}

/** The call with progress notifications: every output chunk, and a heartbeat while it is quiet. */
async function withProgress(
  caller: Caller,
  call: AdmittedCall,
  token: string | number,
  extra: Extra,
  disconnect: ReturnType<typeof disconnectOf>,
): Promise<unknown> {
  let progress = 0
  const started = Date.now()
  const notify = (message: string) => {
    progress++
    void extra
      .sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, message } })
      .catch(() => {})
  }
  const heartbeat = setInterval(() => {
    notify(`${call.entry.name} is running (${Math.round((Date.now() - started) / 1000)} s)`)
  }, heartbeatMs)
  const emit = (event: ToolEvent) => notify(event.text.slice(-500))
  try {
    const outcome = await caller.run(call, { mode: 'now', disconnect, emit })
    return (outcome as { output: unknown }).output
  } finally {
    clearInterval(heartbeat)
  }
}
