import type { CallToolRequest, CallToolResult, CreateTaskResult } from '@modelcontextprotocol/sdk/types.js'
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import type { Context } from 'hono'
import { assertToolAllowed, type Principal } from '../../auth/principal'
import type { Call } from '../../caller/call'
import type { Caller } from '../../caller/caller'
import { ToolError } from '../../core/errors'
import type { JsonSchema } from '../../core/json-schema'
import type { Logger } from '../../core/logger'
import { jobStatusUrl, publicJob } from '../../jobs/types'
import { stripNullOptionals } from '../../platforms/nulls'
import type { Tool, ToolEvent } from '../../tools/tool'
import type { AppEnv } from '../env'
import { problemBody, validationError } from '../problem'
import { pendingResult } from './approvals'
import { handedOver, resultOf } from './content'
import { taskOf } from './tasks'

/** One tool of the principal's catalog as MCP lists it, with the schema its input is read against. */
export interface McpEntry {
  tool: Tool
  inputSchema: JsonSchema
}

export interface McpCallContext {
  context: Context<AppEnv>
  caller: Caller
  log: Logger
  principal: Principal
  workspaceId: string
  /** The protocol version the client negotiated (its MCP-Protocol-Version header). */
  version: string
  /** A tool of the tenant's whole catalog, so one outside the key's scope is refused as such. */
  lookup(name: string): Promise<McpEntry | undefined>
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
  call: McpCallContext,
): Promise<CallToolResult | CreateTaskResult> {
  const entry = await call.lookup(request.params.name)
  if (!entry) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`)
  const { context } = call
  context.set('tool', entry.tool.name)
  context.set('toolSource', entry.tool.source)
  if (entry.tool.tenantSource) context.set('toolOfTenant', true)
  try {
    assertToolAllowed(call.principal, entry.tool)
    // A task must be answered with a task, and a gated call is answered with its pending approval: the
    // two cannot meet, so such a call is refused before any approval is asked for (tools/list says
    // taskSupport "forbidden" for it).
    if (request.params.task && call.principal.requireApproval.has(entry.tool.effect)) {
      throw new ToolError(
        'validation',
        `${entry.tool.name} waits for an approver for this key, so it cannot run as a task.`,
        { hint: 'Call it without "task": the answer is then its pending approval, which an approver decides.' },
      )
    }
    const prepared: Call = {
      tool: entry.tool,
      input: parseInput(entry, request.params.arguments ?? {}),
      principal: call.principal,
      workspaceId: call.workspaceId,
      origin: context.get('linkOrigin'),
      signal: AbortSignal.any([context.req.raw.signal, extra.signal]),
      inlineImages: true,
    }
    // The same gate as REST: a call this key's policy gates waits for an approver, as a normal result.
    const admission = await call.caller.admit(prepared, { dryRun: false })
    if (admission?.kind === 'pending_approval') return pendingResult(admission.pending)
    if (request.params.task) {
      const outcome = await call.caller.run(prepared, { async: true, callbackUrl: null })
      if ('job' in outcome) return { task: taskOf(outcome.job) }
      return resultOf(outcome.output, call.version)
    }
    const token = request.params._meta?.progressToken
    if (token !== undefined) return resultOf(await withProgress(call.caller, prepared, token, extra), call.version)
    const outcome = await call.caller.run(prepared, { async: false, callbackUrl: null })
    if ('output' in outcome) return resultOf(outcome.output, call.version)
    const origin = context.get('linkOrigin')
    return handedOver(publicJob(outcome.job, jobStatusUrl(origin, outcome.job.id)))
  } catch (error) {
    const problem = problemBody(error, context, call.log)
    // A task request must get a task or a protocol error; a tool error result is neither (the SDK
    // refuses it as an invalid task creation result, and the client learns nothing).
    if (request.params.task) throw new McpError(ErrorCode.InvalidParams, String(problem.detail), problem)
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(problem) }] }
  }
}

/** The call with progress notifications: every output chunk, and a heartbeat while it is quiet. */
async function withProgress(caller: Caller, call: Call, token: string | number, extra: Extra): Promise<unknown> {
  let progress = 0
  const started = Date.now()
  const notify = (message: string) => {
    progress++
    void extra
      .sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, message } })
      .catch(() => {})
  }
  const heartbeat = setInterval(() => {
    notify(`${call.tool.name} is running (${Math.round((Date.now() - started) / 1000)} s)`)
  }, heartbeatMs)
  const emit = (event: ToolEvent) => notify(event.text.slice(-500))
  try {
    return await caller.invoke({ ...call, emit })
  } finally {
    clearInterval(heartbeat)
  }
}

/** The same input handling as REST: nulls for unset optional fields dropped, then the tool's own schema. */
function parseInput(entry: McpEntry, args: Record<string, unknown>): unknown {
  const input = stripNullOptionals(structuredClone(args), entry.inputSchema)
  const parsed = entry.tool.input.safeParse(input)
  if (!parsed.success) throw validationError(parsed.error, 'input', entry.inputSchema)
  return parsed.data
}
