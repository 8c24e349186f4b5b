import { assertToolAllowed, type Principal } from '../auth'
import type { ObjectStore } from '../storage/store'
import { createWorkspace } from '../workspace/workspace'
import { ToolError } from './errors'
import type { ToolServices } from './services'
import type { Logger, Tool, ToolEvent, ToolLimits } from './tool'

export interface Invocation {
  tool: Tool
  /** Input already validated against tool.input. */
  input: unknown
  principal: Principal
  workspaceId: string
  storage: ObjectStore
  limits: ToolLimits
  signal: AbortSignal
  log: Logger
  services: ToolServices
  emit?: (event: ToolEvent) => void
  /** Origin of the request, so generated file links point back at this service. */
  origin?: string
}

/**
 * Runs one tool call the same way for every transport (HTTP today, MCP and jobs later):
 * permission first, then a workspace bound to the caller's tenant, then the output checked against
 * the declared schema so no transport ever sends what the catalog does not promise.
 */
export async function invokeTool(invocation: Invocation): Promise<unknown> {
  const { tool, principal, log } = invocation
  assertToolAllowed(principal, tool.name)
  // Approval is asked for by POST /v1/tools/{name} (src/approvals); other transports (MCP) may not skip it.
  if (principal.requireApproval.has(tool.effect)) {
    throw new ToolError('permission_denied', `This key needs an approval to call ${tool.name} (${tool.effect}).`, {
      hint: `Call POST /v1/tools/${tool.name}: it answers 202 pending_approval, and POST /v1/approvals/{id} runs the call.`,
    })
  }
  const workspace = createWorkspace(invocation.storage, principal.tenant, invocation.workspaceId, {
    quota: invocation.services.quota,
  })
  const deadlineMs = tool.deadlineMs?.(invocation.input as never) ?? invocation.limits.callTimeoutMs
  // Like AbortSignal.timeout, but the timer is cleared when the call ends: no 300 s timer per finished call.
  const deadline = deadlineMs === undefined ? undefined : new AbortController()
  const timer = deadline
    ? setTimeout(() => deadline.abort(new DOMException('The call deadline passed.', 'TimeoutError')), deadlineMs)
    : undefined
  const signal = deadline ? AbortSignal.any([invocation.signal, deadline.signal]) : invocation.signal
  const running = tool.run(invocation.input as never, {
    workspace,
    limits: invocation.limits,
    signal,
    log,
    ...invocation.services,
    emit: invocation.emit ?? (() => {}),
    ...(invocation.origin ? { origin: invocation.origin } : {}),
  })
  let output: unknown
  try {
    output =
      deadline && deadlineMs !== undefined ? await raceDeadline(running, deadline.signal, deadlineMs) : await running
  } finally {
    clearTimeout(timer)
  }
  const checked = tool.output.safeParse(output)
  if (!checked.success) {
    log.error('tool output does not match its schema', { tool: tool.name, issues: checked.error.issues })
    throw new ToolError('internal', `${tool.name} produced an invalid result.`)
  }
  return checked.data
}

/**
 * The tool saw the aborted signal, but a tool that ignores it must not hold the call: the answer is
 * 504 at the deadline whatever the tool does (its late result or error is dropped).
 */
async function raceDeadline<T>(running: Promise<T>, deadline: AbortSignal, deadlineMs: number): Promise<T> {
  let onAbort: (() => void) | undefined
  const expired = new Promise<never>((_, reject) => {
    onAbort = () =>
      reject(
        new ToolError('timeout', `The call did not finish within its ${Math.round(deadlineMs / 1000)} s deadline.`, {
          hint: 'Call with ?async=true to run it as a job and poll status_url, or split the work into smaller calls.',
          details: { limit_seconds: deadlineMs / 1000 },
        }),
      )
    if (deadline.aborted) onAbort()
    else deadline.addEventListener('abort', onAbort, { once: true })
  })
  running.catch(() => {})
  try {
    return await Promise.race([running, expired])
  } finally {
    if (onAbort) deadline.removeEventListener('abort', onAbort)
  }
}
