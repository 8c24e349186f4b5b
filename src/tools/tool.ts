import type { z } from 'zod'
import type { Effect } from '../core/effects'
import type { EgressPolicy } from '../core/egress-policy'
import type { Logger } from '../core/logger'
import type { JobViewer } from '../jobs/access'
import type { Workspace } from '../workspace/workspace'
import type { ToolServices } from './services'

export interface ToolLimits {
  /** Largest file a tool may read or write, in bytes. */
  maxFileBytes: number
  /** Largest serialized response, in characters. */
  maxResponseChars: number
  /** TOOLPORT_CALL_TIMEOUT_SECONDS in ms: deadline of a call whose tool sets none (unset: no deadline). */
  callTimeoutMs?: number
}

/** Progress a tool reports while it runs; streamed to clients that asked for text/event-stream. */
export type ToolEvent = { type: 'output'; stream: 'stdout' | 'stderr'; text: string }

/** Everything a tool may use; tools never reach for globals. */
export interface ToolContext extends ToolServices {
  workspace: Workspace
  limits: ToolLimits
  signal: AbortSignal
  log: Logger
  emit: (event: ToolEvent) => void
  /** Origin of the HTTP request (e.g. http://127.0.0.1:8787), for links when no public URL is set. */
  origin?: string
  /** The caller's key's egress policy (keys file `egress`), within the server's; undefined: none of its own. */
  keyEgress: EgressPolicy | undefined
  /** The key that calls: whose jobs it may see (get_job, cancel_job). */
  principal: JobViewer
  /**
   * The transport shows images to the model (MCP): a tool may add `image: { mime_type, data }` (base64)
   * to its output, which the transport turns into an image content block. REST and SSE leave it unset.
   */
  inlineImages?: boolean
}

// biome-ignore lint/suspicious/noExplicitAny: the catalog holds tools with different schemas
export type AnyZodObject = z.ZodType<any, any>

export interface Tool<Input extends AnyZodObject = AnyZodObject, Output extends AnyZodObject = AnyZodObject> {
  /** snake_case, fits ^[A-Za-z_][A-Za-z0-9_-]{0,63}$ so every platform accepts it. */
  name: string
  /**
   * Stable identity across renames and sources: `builtin:{name}` for built-ins (the default), and
   * `{source}:{tool}` for a tool a source declares (the tool as the source names it).
   */
  id?: string
  /** The source that declared the tool; unset for built-ins. Labels logs and metrics. */
  source?: string
  /** An alias under another name runs this built-in (sources/kinds/alias.ts); key scopes follow it. */
  aliasOf?: string
  /**
   * Declared by a tenant's own source: its tool and source names are that tenant's, so they label the
   * operator's logs but not the metrics, which every key of every tenant may read.
   */
  tenantSource?: boolean
  /**
   * Listed for, and callable by, every key whatever its tool scope (the job tools: a key that may start a
   * long call must be able to collect it). Such a tool only sees its caller's tenant.
   */
  everyKey?: boolean
  /**
   * The route the OpenAPI document describes this tool by instead of POST /v1/tools/{name} (the job
   * tools are GET and DELETE /v1/jobs/{id}, under the same operationIds).
   */
  describedBy?: string
  /**
   * What the effect alone does not say, for MCP's annotations: whether a call may overwrite or delete
   * (default: yes for write and destructive tools, no for read and external ones) and whether repeating
   * it has no further effect (default: only for read tools).
   */
  hints?: { destructive?: boolean; idempotent?: boolean }
  /**
   * Never turned into a job, however long it takes or whether ?async=true asks: the job tools, whose
   * bounded wait is the point of calling them (get_job waiting 50 s must not answer with another job).
   */
  runsInline?: boolean
  /**
   * The JSON Schemas the catalog publishes, when the tool was declared with JSON Schema (a source tool)
   * rather than derived from `input` and `output` (built-ins).
   */
  schemas?: { input: Record<string, unknown>; output: Record<string, unknown> }
  title: string
  /** Written for a model: what the tool does and when to use it. At most 300 characters. */
  description: string
  effect: Effect
  input: Input
  output: Output
  run(input: z.output<Input>, context: ToolContext): Promise<z.input<Output>>
  /**
   * What to call this one call, e.g. "Edit src/app.ts": a person watching a stream of calls reads
   * these, and the tool title alone cannot tell two calls apart. Defaults to the title.
   */
  callTitle?(input: z.output<Input>): string
  /**
   * The call's own deadline in ms (e.g. execute_command: its timeout_seconds plus a margin), used instead
   * of limits.callTimeoutMs so a tool's longer timeout is respected.
   */
  deadlineMs?(input: z.output<Input>): number
  /**
   * What the call would do, changing nothing: ?dry_run=true answers it, and an approver sees it. Runs
   * the tool's own checks, so a call that cannot succeed is refused before anyone is asked.
   */
  dryRun?(input: z.output<Input>, context: DryRunContext): Promise<unknown>
  /**
   * The shape of what dryRun answers: the OpenAPI document declares `?dry_run=true`'s 200 with it, and
   * every built-in with a dry run has one (a test parses each dry run with it).
   */
  preview?: AnyZodObject
  /**
   * True when the dry run shows the call would change nothing (a delete of a file that is not there):
   * such a call runs without asking an approver, since there is nothing to decide.
   */
  changesNothing?(preview: unknown): boolean
}

/**
 * What a dry run may use: it reads the workspace and asks the services what they would do (the
 * command policy, the address rules), and writes and sends nothing.
 */
export interface DryRunContext extends Partial<ToolServices> {
  workspace: Workspace
  limits: ToolLimits
  keyEgress: EgressPolicy | undefined
  principal: JobViewer
}

/** A tool's stable id: `builtin:{name}` unless its source gave it one. */
export function idOf(tool: Tool): string {
  return tool.id ?? `builtin:${tool.name}`
}

/** The title of one call; a callTitle that fails must not fail the call it only names. */
export function titleOfCall(tool: Tool, input: unknown): string {
  try {
    return tool.callTitle?.(input) || tool.title
  } catch {
    return tool.title
  }
}

/** A typed identity function: a tool is plain data. */
export function defineTool<Input extends AnyZodObject, Output extends AnyZodObject>(
  tool: Tool<Input, Output>,
): Tool<Input, Output> {
  return tool
}
