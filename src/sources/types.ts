import type { CatalogEntry } from '../catalog/entry'
import type { Logger } from '../core/logger'
import type { HttpClient } from '../net/http'
import type { SandboxProcess } from '../sandbox/executors/sandbox'
import type { Tool } from '../tools/tool'

/** Who registered a source: the operator (a folder or storage prefix), or a tenant (PUT /v1/sources/{id}). */
export type SourceOwner = { kind: 'operator' } | { kind: 'tenant'; tenant: string }

/** `disabled`: registered with `"enabled": false`; it does not load, and its tools are unavailable. */
export type SourceState = 'loading' | 'ready' | 'error' | 'disabled'

/** What GET /v1/sources shows of one source: never its secrets. */
export interface SourceStatus {
  id: string
  kind: string
  owner: 'operator' | 'tenant'
  status: SourceState
  /** False when its manifest says `"enabled": false` (or PATCH /v1/sources/{id} did). */
  enabled: boolean
  /** Whether it offers tools to models (reference 002's supportsAi): false for a plugin with `aiTools: []`. */
  supports_ai: boolean
  /** When it entered its status (ISO 8601). */
  since: string
  /** Why the source is in error (or what it is waiting for); a model or an admin can act on it. */
  reason?: string
  /** The names its tools have in the catalog. */
  tools: string[]
  /** When the source last loaded or refreshed, successfully or not (ISO 8601); null while loading. */
  refreshed_at: string | null
  /** Fingerprint of the manifest as stored. */
  revision: string
}

/** Everything a source kind may use to load its tools and, later, to run them. */
export interface SourceLoadContext {
  owner: SourceOwner
  /**
   * The outbound client for this source: the service's address rules, plus (operator sources only) the
   * hosts its manifest names explicitly.
   */
  http: HttpClient | undefined
  /** Values of `{ "secret": NAME }` references: the server's environment for operator sources, the tenant's keys-file secrets for tenant sources. */
  secret(name: string): string | undefined
  log: Logger
  signal: AbortSignal
  /** Tools this source may refer to (aliases): the built-ins. */
  builtins: ReadonlyMap<string, Tool>
  /** Starts sandboxed processes (stdio MCP servers); undefined where the runtime runs no processes. */
  processes: ProcessStarter | undefined
  /** Whether a source may keep a process or connection open between calls (false on Lambda). */
  keepWarm: boolean
}

/** A host folder an operator source may see read-only inside the sandbox (an installed server's code). */
export interface SourceMount {
  host: string
  sandbox: string
}

/** A long-lived sandboxed process with pipes: what a stdio MCP server runs as (the executors' own). */
export type SourceProcess = SandboxProcess

export interface ProcessRequest {
  argv: string[]
  env: Record<string, string>
  /** Container image (container executor only). */
  image?: string | undefined
  mounts: SourceMount[]
  /** A label for logs and the process's scratch folder, e.g. "operator/fs" or "acme/fs". */
  label: string
  /** Network as the operator's egress policy allows, counted for this tenant; unset: none. */
  egress?: { tenant: string }
}

export interface ProcessStarter {
  start(request: ProcessRequest): Promise<SourceProcess>
}

/** A source whose tools are ready to list and call. */
export interface LoadedSource {
  tools: CatalogEntry[]
  /**
   * Tools of the same name that replace a built-in's input handling (compat packs only: accept the
   * reference systems' field spellings on toolport's own tools). Keyed by the built-in's name.
   */
  overrides?: ReadonlyMap<string, CatalogEntry>
  /** Things an admin should know although the source works (tools skipped, and why). */
  notes?: string[]
  /** What an admin should know now (a worker that stopped, and its stderr), shown with the status. */
  note?(): string | undefined
  /** Subscribes to changes of note(): the status is assembled again. */
  onNote?(listener: () => void): void
  /** Called when the source is removed or replaced: close connections, stop processes. */
  close?(): Promise<void>
  /** Subscribes to the source's own change signal (an MCP server's tools/list_changed). */
  onChange?(listener: () => void): void
}

/** One kind of source: validates its manifest and turns it into tools. */
export interface SourceKind<Definition = unknown> {
  kind: string
  load(definition: Definition, context: SourceLoadContext): Promise<LoadedSource>
}
