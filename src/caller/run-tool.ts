import { ToolError } from '../core/errors'
import type { Logger } from '../core/logger'
import type { TraceSpan } from '../core/tracing'
import type { CallAccount } from '../core/usage'
import type { ObjectStore } from '../storage/store'
import { tracedStore } from '../storage/traced'
import type { ToolServices } from '../tools/services'
import type { ClientChannel, DryRunContext, ServiceName, ToolEvent, ToolLimits } from '../tools/tool'
import { createWorkspace } from '../workspace/workspace'
import type { Call } from './call'
import { runWithDeadline } from './deadline'
import { type ContextParts, declaredServices, ToolCallContext } from './tool-context'

export interface ToolRunnerDeps {
  storage: ObjectStore
  log: Logger
  /** Everything the deployment lends; each tool is given the services it declares. */
  services: ToolServices
}

/** Runs the tool of a call: its context, its deadline, its output checked; and the context of its dry run. */
export interface ToolRunner {
  /** The call's controller is aborted by its deadline (and by whoever else holds it: a disconnect, a cancel). */
  run(call: Call, limits: ToolLimits, controller: AbortController, transport?: TransportParts): Promise<unknown>
  dryRunContext(call: Call, limits: ToolLimits): DryRunContext<ServiceName>
}

/** What the transport lends one call: where its progress goes, and the client it can ask mid-call. */
export interface TransportParts {
  emit?: ((event: ToolEvent) => void) | undefined
  client?: ClientChannel | undefined
  /** The call's span (caller.ts); unset when tracing is off. */
  span?: TraceSpan | undefined
  /** Where the tool tells what it used and refused (caller.ts); unset when usage and audit are off. */
  account?: CallAccount | undefined
}

export function createToolRunner(deps: ToolRunnerDeps): ToolRunner {
  const { storage, log, services } = deps
  // Requests over the network (S3, R2) are client spans; the fs driver's are file system calls on this
  // machine, a few microseconds each, which stay in the call's own span: as OpenTelemetry's Node
  // auto-instrumentation leaves fs off by default, for a span would cost more than the read it times.
  const remote = storage.driver === 's3' || storage.driver === 'r2'

  function partsOf(call: Call, limits: ToolLimits, transport: TransportParts): ContextParts {
    const { principal } = call
    // A traced call's requests to a bucket are spans of it; an untraced one uses the store as it is.
    const store = transport.span?.recording && remote ? tracedStore(storage, transport.span) : storage
    return {
      workspace: createWorkspace(store, principal.tenant, call.workspaceId, { quota: services.quota }),
      limits,
      log,
      emit: transport.emit,
      client: transport.client,
      origin: call.origin,
      keyEgress: principal.egress,
      principal,
      inlineImages: call.inlineImages,
      span: transport.span,
      account: transport.account,
    }
  }

  return {
    async run(call, limits, controller, transport = {}) {
      const { tool } = call.entry
      // Typed for the services the tool declared (its `uses`), which are the ones it is given.
      const context = new ToolCallContext(
        partsOf(call, limits, transport),
        declaredServices(services, tool),
        controller,
      ) as never
      const deadlineMs = tool.deadlineMs?.(call.input) ?? limits.callTimeoutMs
      const output =
        deadlineMs === undefined
          ? await tool.run(call.input, context)
          : await runWithDeadline(deadlineMs, controller, () => tool.run(call.input, context))
      // No transport ever sends what the catalog does not promise.
      const checked = tool.output.safeParse(output)
      if (!checked.success) {
        log.error('tool output does not match its schema', { tool: tool.name, issues: checked.error.issues })
        throw new ToolError('internal', `${tool.name} produced an invalid result.`)
      }
      return checked.data
    },
    dryRunContext(call, limits) {
      const { workspace, keyEgress, principal } = partsOf(call, limits, {})
      return { ...declaredServices(services, call.entry.tool), workspace, limits, keyEgress, principal } as never
    },
  }
}
