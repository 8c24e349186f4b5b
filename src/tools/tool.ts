import type { z } from 'zod'
import type { Effect } from '../core/effects'
import type { EgressPolicy } from '../core/egress-policy'
import type { Logger } from '../core/logger'
import type { TraceSpan } from '../core/tracing'
import type { CallAccount } from '../core/usage'
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
export type ToolEvent =
  | { type: 'output'; stream: 'stdout' | 'stderr'; text: string }
  /** How far the work is (an upstream MCP server's progress notification, passed on). */
  | { type: 'progress'; progress: number; total?: number; message?: string }
  /** A log message (an upstream MCP server's notifications/message), at RFC 5424's levels as MCP names them. */
  | { type: 'log'; level: LogLevel; logger?: string; data: unknown }

export type LogLevel = 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency'

/**
 * What the calling client can do for a running tool, where its transport can carry it (MCP): an MCP
 * source's server may ask for a completion (sampling) or for the user's input (elicitation) mid-call,
 * and its own result may reach the client unchanged. REST and jobs have no such channel: unset.
 */
export interface ClientChannel {
  /** The client's declared capabilities (MCP `capabilities`: `sampling`, `elicitation`, …). */
  readonly capabilities: Readonly<Record<string, unknown>>
  /** Sends the client a request (`sampling/createMessage`, `elicitation/create`) and waits for its answer. */
  request(method: string, params: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>>
  /**
   * An upstream MCP server's own result, unchanged: the transport answers with it in place of the
   * output (which it still is for REST, jobs and the call's checks).
   */
  answer(result: Record<string, unknown>): void
}

/** A service a tool may declare in `uses`: the sandbox (`shell`), the outbound client (`http`), … */
export type ServiceName = keyof ToolServices

/** What every call of every tool runs with, whatever services it declares. */
export interface CallContext {
  workspace: Workspace
  limits: ToolLimits
  /** Aborts when the call's deadline passes or its client goes away. */
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
  /** The calling client, where the transport can reach it mid-call (MCP); unset for REST and jobs. */
  client?: ClientChannel
  /**
   * The call's span when tracing is on: work done for the call is its child, and a source passes its
   * carrier (traceparent) to its own upstream. Never to a URL a model asked for (http_fetch, pages).
   */
  span?: TraceSpan
  /** Where the tool tells what it used and refused (usage per tenant, the audit log); unset: neither is kept. */
  account?: CallAccount
}

/** What a tool's run gets: the call, and the services it declared (`uses`), no others. */
export type ToolContext<Uses extends ServiceName = never> = CallContext & Pick<ToolServices, Uses>

/**
 * What a dry run may use: it reads the workspace and asks the services it declared what they would do
 * (the command policy, the address rules), and writes and sends nothing.
 */
export type DryRunContext<Uses extends ServiceName = never> = Pick<
  CallContext,
  'workspace' | 'limits' | 'keyEgress' | 'principal'
> &
  Pick<ToolServices, Uses>

// biome-ignore lint/suspicious/noExplicitAny: the catalog holds tools with different schemas
export type AnyZodObject = z.ZodType<any, any>

/**
 * A tool as its author writes it: what it is, what it takes and answers, what it needs, how it runs.
 * Where it sits in the catalog (its id, its source, an alias, who may call it) is the catalog's
 * (catalog/entry.ts), not the tool's.
 */
export interface Tool<
  Input extends AnyZodObject = AnyZodObject,
  Output extends AnyZodObject = AnyZodObject,
  Uses extends ServiceName = ServiceName,
> {
  /** snake_case, fits ^[A-Za-z_][A-Za-z0-9_-]{0,63}$ so every platform accepts it. */
  name: string
  title: string
  /** Written for a model: what the tool does and when to use it. At most 300 characters. */
  description: string
  effect: Effect
  input: Input
  output: Output
  /** The services run and dryRun receive (the sandbox, the outbound client, the browser, …); none others. */
  uses?: readonly Uses[]
  /**
   * What the effect alone does not say, for MCP's annotations: whether a call may overwrite or delete
   * (default: yes for write and destructive tools, no for read and external ones) and whether repeating
   * it has no further effect (default: only for read tools), and whether it reaches the world outside
   * the service (default: only external tools; a read of the public web is a read that does).
   */
  hints?: { destructive?: boolean; idempotent?: boolean; openWorld?: boolean }
  /**
   * True when a call may send its client progress, log messages or requests mid-call (context.client,
   * context.emit): an MCP source's tool. Transports that can carry them answer on a stream.
   */
  relaysClient?: boolean
  run(input: z.output<Input>, context: ToolContext<Uses>): Promise<z.input<Output>>
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
  dryRun?(input: z.output<Input>, context: DryRunContext<Uses>): Promise<unknown>
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
  /**
   * The effect of one call where it is narrower than the tool's (an http_fetch GET only reads): what
   * the approval policy weighs for that call. Never wider than `effect`.
   */
  callEffect?(input: unknown): Effect
}

/** The title of one call; a callTitle that fails must not fail the call it only names. */
export function titleOfCall(tool: Tool, input: unknown): string {
  try {
    return tool.callTitle?.(input) || tool.title
  } catch {
    return tool.title
  }
}

/**
 * A typed identity function: a tool is plain data. Its run and dry run are typed with the services its
 * `uses` names (a tool that declares none gets none), and the caller hands them exactly those.
 */
export function defineTool<
  Input extends AnyZodObject,
  Output extends AnyZodObject,
  const Uses extends ServiceName = never,
>(tool: Tool<Input, Output, Uses>): Tool<Input, Output, Uses> {
  return tool
}
