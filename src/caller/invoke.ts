import { assertToolAllowed, type Principal } from '../auth/authenticator'
import { ToolError } from '../core/errors'
import type { ObjectStore } from '../storage/store'
import type { ToolServices } from '../tools/services'
import type { Logger, Tool, ToolEvent, ToolLimits } from '../tools/tool'
import { createWorkspace } from '../workspace/workspace'

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
  const context = {
    workspace,
    limits: invocation.limits,
    log,
    ...invocation.services,
    emit: invocation.emit ?? (() => {}),
    ...(invocation.origin ? { origin: invocation.origin } : {}),
  }
  let output: unknown
  if (deadlineMs === undefined) {
    output = await tool.run(invocation.input as never, { ...context, signal: invocation.signal })
  } else {
    output = await runWithDeadline(deadlineMs, invocation.signal, (signal) =>
      tool.run(invocation.input as never, { ...context, signal }),
    )
  }
  const checked = tool.output.safeParse(output)
  if (!checked.success) {
    log.error('tool output does not match its schema', { tool: tool.name, issues: checked.error.issues })
    throw new ToolError('internal', `${tool.name} produced an invalid result.`)
  }
  return checked.data
}

/**
 * Runs `run` with a signal that aborts when `outer` does (with its reason) or when the deadline
 * passes (a TimeoutError). One controller and one timer serve both, cleared when the call ends: no
 * AbortSignal.any and no timer left behind per finished call, which a busy server pays for on every
 * call. The tool sees the aborted signal, but a tool that ignores it must not hold the call: the
 * answer is 504 at the deadline whatever the tool does (its late result or error is dropped).
 */
async function runWithDeadline<T>(
  deadlineMs: number,
  outer: AbortSignal,
  run: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController()
  const forward = () => controller.abort(outer.reason)
  if (outer.aborted) forward()
  else outer.addEventListener('abort', forward, { once: true })
  let timer: ReturnType<typeof setTimeout> | undefined
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // Rejected before the abort, so the race answers timeout even when the tool fails at once on it.
      reject(
        new ToolError('timeout', `The call did not finish within its ${Math.round(deadlineMs / 1000)} s deadline.`, {
          hint: 'Call with ?async=true to run it as a job and poll status_url, or split the work into smaller calls.',
          details: { limit_seconds: deadlineMs / 1000 },
        }),
      )
      controller.abort(new DOMException('The call deadline passed.', 'TimeoutError'))
    }, deadlineMs)
  })
  try {
    const running = run(controller.signal)
    running.catch(() => {})
    return await Promise.race([running, expired])
  } finally {
    clearTimeout(timer)
    outer.removeEventListener('abort', forward)
  }
}
