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
  const workspace = createWorkspace(invocation.storage, principal.tenant, invocation.workspaceId)
  const output = await tool.run(invocation.input as never, {
    workspace,
    limits: invocation.limits,
    signal: invocation.signal,
    log,
    ...invocation.services,
    emit: invocation.emit ?? (() => {}),
    ...(invocation.origin ? { origin: invocation.origin } : {}),
  })
  const checked = tool.output.safeParse(output)
  if (!checked.success) {
    log.error('tool output does not match its schema', { tool: tool.name, issues: checked.error.issues })
    throw new ToolError('internal', `${tool.name} produced an invalid result.`)
  }
  return checked.data
}
