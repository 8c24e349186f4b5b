import type { EgressPolicy } from '../core/egress-policy'
import type { Logger } from '../core/logger'
import type { TraceSpan } from '../core/tracing'
import type { CallAccount } from '../core/usage'
import type { JobViewer } from '../jobs/access'
import type { ToolServices } from '../tools/services'
import type { CallContext, ClientChannel, Tool, ToolEvent, ToolLimits } from '../tools/tool'
import type { Workspace } from '../workspace/workspace'

/** The services a tool declared in `uses`, and no others. */
export function declaredServices(services: ToolServices, tool: Tool): Partial<ToolServices> {
  const own: Partial<ToolServices> = {}
  for (const name of tool.uses ?? []) Object.assign(own, { [name]: services[name] })
  return own
}

/** What one call's context is made of, besides the tool's services and the call's controller. */
export interface ContextParts {
  workspace: Workspace
  limits: ToolLimits
  log: Logger
  emit: ((event: ToolEvent) => void) | undefined
  client: ClientChannel | undefined
  origin: string | undefined
  keyEgress: EgressPolicy | undefined
  principal: JobViewer
  inlineImages: boolean
  span: TraceSpan | undefined
  account?: CallAccount | undefined
}

const ignore = () => {}

/**
 * The context one tool call runs with: the call's own parts, the services its tool declared (`uses`)
 * and no others, and the signal of the call's controller, which the deadline and a disconnect abort.
 *
 * A class whose `signal` is a getter on the prototype, so the AbortSignal is made only when a tool
 * reads it: one costs 3.3 µs on Node 20 here (new AbortController().signal in a loop; the controller
 * alone 3 ns), about 2% of a read_file call's CPU, and most file tools never read it. A getter on the
 * prototype, not an accessor made per object: V8 keeps a per-object accessor in the old generation,
 * from where it held each call's whole context through every minor GC (--trace-gc-nvp under
 * bench/http-overhead.ts: ~6,000 bytes promoted per call with the accessor, under 200 with the class).
 * Spreading a context drops its signal: tools pass the context itself along.
 */
export class ToolCallContext implements CallContext {
  readonly #controller: AbortController
  workspace: Workspace
  limits: ToolLimits
  log: Logger
  emit: (event: ToolEvent) => void
  declare origin?: string
  keyEgress: EgressPolicy | undefined
  principal: JobViewer
  declare inlineImages?: boolean
  declare client?: ClientChannel
  declare span?: TraceSpan
  declare account?: CallAccount

  constructor(parts: ContextParts, services: Partial<ToolServices>, controller: AbortController) {
    Object.assign(this, services)
    this.#controller = controller
    this.workspace = parts.workspace
    this.limits = parts.limits
    this.log = parts.log
    this.emit = parts.emit ?? ignore
    if (parts.origin) this.origin = parts.origin
    this.keyEgress = parts.keyEgress
    this.principal = parts.principal
    if (parts.inlineImages) this.inlineImages = true
    if (parts.client) this.client = parts.client
    if (parts.span?.recording) this.span = parts.span
    if (parts.account) this.account = parts.account
  }

  get signal(): AbortSignal {
    return this.#controller.signal
  }
}
