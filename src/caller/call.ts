import type { Principal } from '../auth/principal'
import type { Tool, ToolEvent } from '../tools/tool'

/**
 * One tool call as every transport hands it to the caller: REST JSON and SSE, MCP, jobs and approved
 * calls alike. The input is already validated against the tool's schema.
 */
export interface Call {
  tool: Tool
  input: unknown
  principal: Principal
  workspaceId: string
  /** Origin of the request, so generated links point back at this service (unset: a job's own record). */
  origin: string | undefined
  /** Aborts when the caller goes away (a disconnect, a cancelled job). */
  signal: AbortSignal
  /**
   * Subscribes to the client going away, for a transport that hears it without an AbortSignal (the
   * Node response's close): Caller.run listens here instead of on `signal`, which the transport then
   * makes only when read, so a REST call makes one AbortController, its own. Returns the unsubscribe.
   */
  onDisconnect?: (listener: () => void) => () => void
  /** Progress the tool reports (SSE output events); unset: dropped. */
  emit?: (event: ToolEvent) => void
  /** The transport turns an output's `image` into an image block (MCP); see ToolContext.inlineImages. */
  inlineImages?: boolean
  /**
   * Set by the approval gate (Caller.admit) when a call its key's policy gates may run without a
   * decision: its dry run showed it would change nothing. Transports never set it themselves.
   */
  admitted?: true
}
