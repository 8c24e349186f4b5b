import { assertToolAllowed, type Principal } from '../auth/principal'
import { ToolError } from '../core/errors'
import type { Logger } from '../core/logger'
import type { ObjectStore } from '../storage/store'
import type { ToolServices } from '../tools/services'
import type { Tool, ToolContext, ToolEvent, ToolLimits } from '../tools/tool'
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
  /**
   * What aborts the call: the caller's signal, or a controller made for this call alone, which the
   * deadline then aborts directly and whose signal is made only if the tool reads it (an
   * AbortSignal is a visible share of a small call's cost; most file tools never look at it).
   */
  abort: AbortSignal | AbortController
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
 * The `signal` of a tool's context, read from its controller only when the tool asks (most file
 * tools never do, and an AbortSignal is a visible share of a small call's cost). A class with the
 * getter on its prototype, not an object literal with `get signal()`: V8 keeps an accessor made per
 * object in the old generation, from where it held each call's whole context through every minor
 * GC (see http/rest-call.ts).
 */
class LazySignal {
  readonly #controller: AbortController

  constructor(controller: AbortController) {
    this.#controller = controller
  }

  get signal(): AbortSignal {
    return this.#controller.signal
  }
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
  const { abort } = invocation
  const base = {
    workspace,
    limits: invocation.limits,
    log,
    ...invocation.services,
    emit: invocation.emit ?? (() => {}),
    ...(invocation.origin ? { origin: invocation.origin } : {}),
    keyEgress: principal.egress,
    principal,
    ...(invocation.inlineImages ? { inlineImages: true } : {}),
  }
  const withSignal = (controller: AbortController) => Object.assign(new LazySignal(controller), base) as ToolContext
  let output: unknown
  if (deadlineMs === undefined) {
    const context = abort instanceof AbortController ? withSignal(abort) : { ...base, signal: abort }
    output = await tool.run(invocation.input as never, context)
  } else {
    // With the call's own controller the deadline aborts that very controller: no second one.
    output = await runWithDeadline(deadlineMs, abort, (controller) =>
      tool.run(invocation.input as never, withSignal(controller)),
    )
  }
  const checked = tool.output.safeParse(output)
  if (!checked.success) {
    log.error('tool output does not match its schema', { tool: tool.name, issues: checked.error.issues })
    throw new ToolError('internal', `${tool.name} produced an invalid result.`)
  }
  return checked.data
}
