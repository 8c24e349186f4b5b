import type { Principal } from '../auth/principal'
import type { CatalogEntry } from '../catalog/entry'
import type { TraceCarrier } from '../core/tracing'
import type { ClientChannel, ToolEvent } from '../tools/tool'

/**
 * How a transport hears its client go away: subscribe a listener (told why, where the transport knows),
 * get back the unsubscribe.
 */
export type Disconnect = (listener: (reason?: unknown) => void) => () => void

/** A Disconnect that hears an AbortSignal (a Fetch request's, an MCP request's, a job's). */
export function disconnectOf(signal: AbortSignal): Disconnect {
  return (listener) => {
    if (signal.aborted) {
      listener(signal.reason)
      return () => {}
    }
    const onAbort = () => listener(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    return () => signal.removeEventListener('abort', onAbort)
  }
}

/**
 * What a transport knows of one call before the caller looks at it: who asks, for which tool by name,
 * with which arguments, in which workspace. REST JSON and SSE, MCP, jobs and approvals all decode their
 * request into this, and nothing more.
 */
export interface CallRequest {
  principal: Principal
  /** The tool's name as the client sent it. */
  tool: string
  /**
   * The client's arguments, decoded: called once the tool is found and allowed (REST reads and judges
   * its body only then, so a key learns nothing about a tool it may not use). The caller owns what it
   * answers: it may drop the nulls of unset optional fields in place.
   */
  readInput(): unknown
  workspaceId: string
  /** Origin of the request, so generated links point back at this service (unset: a job's own record). */
  origin: string | undefined
  /** The transport turns an output's `image` into an image block (MCP); see CallContext.inlineImages. */
  inlineImages?: boolean
  /** Told the tool as soon as it is found, before its input is read (the access log labels the call). */
  found?(entry: CatalogEntry): void
  /** The caller's W3C trace context (REST headers, MCP `_meta`): the call's span is its child. */
  trace?: TraceCarrier | undefined
  /** The transport's id of this call (an MCP request id), for gen_ai.tool.call.id. */
  callId?: string | undefined
  /** The HTTP request's id (X-Request-Id), for the audit log. */
  requestId?: string | undefined
}

/**
 * One call, prepared by the caller: the tool found and allowed for this key, the input parsed against
 * its schema, and whether the key's policy makes it wait for an approver. Made once, never changed.
 */
export interface Call {
  readonly entry: CatalogEntry
  /** Parsed by the tool's input schema (its defaults applied). */
  readonly input: unknown
  readonly principal: Principal
  readonly workspaceId: string
  readonly origin: string | undefined
  readonly inlineImages: boolean
  /** This key's policy gates the tool's effect: admit stores the call for an approver instead of running it. */
  readonly needsApproval: boolean
  /** The caller's W3C trace context, kept with a job or an approval so the run joins the same trace. */
  readonly trace?: TraceCarrier | undefined
  readonly callId?: string | undefined
  readonly requestId?: string | undefined
}

declare const admitted: unique symbol

/**
 * A call the approval gate let through: it needs no approval, or its dry run shows it changes nothing,
 * or an approver approved it. Only the caller makes one (Caller.admit); only one is run.
 */
export type AdmittedCall = Call & { readonly [admitted]: true }

/** How a transport wants a call run. */
export interface RunOptions {
  /**
   * `sync` (default): now, and past the synchronous limit it goes on as a job, the answer being that job;
   * `now`: to its end on this request (an event stream, an approver waiting); `job`: as a job, at once.
   * A tool that runs inline (get_job) always runs now.
   */
  mode?: 'sync' | 'now' | 'job'
  /**
   * A source's tool runs `sync` calls to its own end (its source's timeout, then 504): it goes on as a
   * job past the synchronous limit only when the caller opted into that (an MCP client that declared
   * tasks). Built-ins hand over as `sync` says.
   */
  sourceHandOver?: boolean
  /** Hears the client go away: the call is cancelled while it is still the client's (not once a job). */
  disconnect?: Disconnect | undefined
  /** Progress the tool reports (SSE output events, MCP progress); unset: dropped. */
  emit?: ((event: ToolEvent) => void) | undefined
  /** The calling client mid-call (MCP); unset: the tool cannot ask it anything. Never kept by a job. */
  client?: ClientChannel | undefined
  /** With a job: where its finished record is posted. */
  callbackUrl?: string | null | undefined
}
