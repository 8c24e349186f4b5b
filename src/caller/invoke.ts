import { assertToolAllowed, type Principal } from '../auth/principal'
import { ToolError } from '../core/errors'
import type { Logger } from '../core/logger'
import type { ObjectStore } from '../storage/store'
import type { ToolServices } from '../tools/services'
import type { Tool, ToolEvent, ToolLimits } from '../tools/tool'
import { createWorkspace } from '../workspace/workspace'
import { runWithDeadline } from './deadline'

export interface Invocation {
  tool: Tool
  /** Input already validated against tool.input. */
  input: unknown
  principal: Principal
  workspaceId: string
  storage: ObjectStore
  limits: ToolLimits
  signal: AbortSignal
  /** The controller behind `signal` when it was made for this call alone: the deadline aborts it directly. */
  signalOwner?: AbortController
  log: Logger
  services: ToolServices
  emit?: (event: ToolEvent) => void
  /** Origin of the request, so generated file links point back at this service. */
  origin?: string
  /** See ToolContext.inlineImages. */
  inlineImages?: boolean
  /** See Call.admitted: the gate let this gated call through (it changes nothing). */
  admitted?: boolean
}

/**
 * Runs one tool call the same way for every transport (HTTP today, MCP and jobs later):
 * permission first, then a workspace bound to the caller's tenant, then the output checked against
 * the declared schema so no transport ever sends what the catalog does not promise.
 */
export async function invokeTool(invocation: Invocation): Promise<unknown> {
  const { tool, principal, log } = invocation
  assertToolAllowed(principal, tool)
  // Approval is asked for by the gate (Caller.admit, caller/approvals.ts) that REST and MCP call first: no transport may skip it.
  if (principal.requireApproval.has(tool.effect) && !invocation.admitted) {
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
    keyEgress: principal.egress,
    ...(invocation.inlineImages ? { inlineImages: true } : {}),
    signal: invocation.signal,
  }
  let output: unknown
  if (deadlineMs === undefined) {
    output = await tool.run(invocation.input as never, context)
  } else {
    // With the call's own controller (signalOwner) the deadline aborts that signal: no second context.
    output = await runWithDeadline(
      deadlineMs,
      invocation.signal,
      (signal) => tool.run(invocation.input as never, signal === context.signal ? context : { ...context, signal }),
      invocation.signalOwner,
    )
  }
  const checked = tool.output.safeParse(output)
  if (!checked.success) {
    log.error('tool output does not match its schema', { tool: tool.name, issues: checked.error.issues })
    throw new ToolError('internal', `${tool.name} produced an invalid result.`)
  }
  return checked.data
}
