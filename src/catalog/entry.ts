import type { Effect } from '../core/effects'
import { fingerprint } from '../core/hash'
import type { Tool } from '../tools/tool'
import { inputSchemaOf, outputSchemaOf } from '../tools/tool-schemas'

/** The JSON Schemas a tool was declared with (a source tool's), published as they are. */
export interface DeclaredSchemas {
  input: Record<string, unknown>
  output: Record<string, unknown>
}

/**
 * A tool as the catalog holds it: the tool its author wrote, and what the catalog knows around it
 * (its identity, the source that declared it, whom it serves). Built by the catalog for built-ins and
 * by the sources for the tools they declare; a tool never carries these itself.
 */
export interface CatalogEntry {
  readonly tool: Tool
  /** The tool's name (tool.name), the name it is called by. */
  readonly name: string
  /** Stable identity across renames and sources: `builtin:{name}`, or `{source}:{tool}` for a source's tool. */
  readonly id: string
  /** The source that declared the tool; unset for built-ins. Labels logs and metrics. */
  readonly source?: string
  /**
   * Declared by a tenant's own source: its tool and source names are that tenant's, so they label the
   * operator's logs but not the metrics, which every key of every tenant may read.
   */
  readonly tenantSource?: boolean
  /** An alias under another name runs this built-in (sources/kinds/alias.ts); key scopes follow it. */
  readonly aliasOf?: string
  /**
   * Listed for, and callable by, every key whatever its tool scope (the job tools: a key that may start a
   * long call must be able to collect it). Such a tool only sees its caller's tenant.
   */
  readonly everyKey?: boolean
  /**
   * The route the OpenAPI document describes this tool by instead of POST /v1/tools/{name} (the job
   * tools are GET and DELETE /v1/jobs/{id}, under the same operationIds).
   */
  readonly describedBy?: string
  /**
   * Never turned into a job, however long it takes or whether ?async=true asks: the job tools, whose
   * bounded wait is the point of calling them (get_job waiting 50 s must not answer with another job).
   */
  readonly runsInline?: boolean
  /** The JSON Schemas the tool was declared with; unset: derived from its zod schemas (built-ins). */
  readonly schemas?: DeclaredSchemas
  /**
   * What the tool's source offers besides tools (an MCP server's resources, prompts and completions),
   * shared by all its tools: a key that may call one of them sees these too.
   */
  readonly surface?: SourceSurface
}

/**
 * An MCP source's resources, prompts and completions, asked of its server live, as plain MCP JSON
 * (no SDK types: the transports above shape them). Prompt names carry the source's prefix, as its
 * tools' names do; resource URIs are the server's own. Each method is absent where the server offers
 * nothing of the kind.
 */
export interface SourceSurface {
  readonly source: string
  /** The server's direct resources and resource templates (each list capped), for listing and routing. */
  resources?(signal: AbortSignal): Promise<{ resources: JsonRecord[]; templates: JsonRecord[] }>
  /** resources/read of one of its URIs: the server's `{ contents }`. */
  readResource?(uri: string, signal: AbortSignal): Promise<JsonRecord>
  /** Its prompts, names prefixed with the source's id. */
  prompts?(signal: AbortSignal): Promise<JsonRecord[]>
  /** prompts/get by the prefixed name: the server's `{ description?, messages }`. */
  getPrompt?(name: string, args: Record<string, string>, signal: AbortSignal): Promise<JsonRecord>
  /** completion/complete for one of its prompts (prefixed name) or resource templates: `{ completion }`. */
  complete?(params: JsonRecord, signal: AbortSignal): Promise<JsonRecord>
}

export type JsonRecord = Record<string, unknown>

/** Where the catalog places a built-in beyond its name (the job tools). */
export type BuiltinPlacement = Pick<CatalogEntry, 'everyKey' | 'describedBy' | 'runsInline' | 'schemas'>

export function builtinEntry(tool: Tool, placement: BuiltinPlacement = {}): CatalogEntry {
  return { tool, name: tool.name, id: `builtin:${tool.name}`, ...placement }
}

/**
 * A tool a source declares: `{source}:{as the source names it}`, with the JSON Schemas it was declared
 * with (and, for an alias, the built-in it runs).
 */
export function sourceEntry(
  source: string,
  tool: Tool,
  options: { schemas: DeclaredSchemas; sourceName?: string; aliasOf?: string; surface?: SourceSurface },
): CatalogEntry {
  return {
    tool,
    name: tool.name,
    id: `${source}:${options.sourceName ?? tool.name}`,
    source,
    schemas: options.schemas,
    ...(options.aliasOf !== undefined ? { aliasOf: options.aliasOf } : {}),
    ...(options.surface ? { surface: options.surface } : {}),
  }
}

/** The JSON Schema a caller's input must match: the declared one, or the tool's own (defaults optional). */
export function inputSchemaOfEntry(entry: CatalogEntry): Record<string, unknown> {
  return entry.schemas?.input ?? inputSchemaOf(entry.tool)
}

/** One tool as the catalog shows it: what every platform format and the OpenAPI document derive from. */
export interface ToolListing {
  /** Stable identity: `builtin:{name}`, or `{source}:{tool}` for a tool a source declares. */
  id: string
  name: string
  title: string
  description: string
  effect: Effect
  input_schema: Record<string, unknown>
  output_schema: Record<string, unknown>
  /** Whether a call may overwrite or delete, and whether repeating it changes nothing more (MCP's hints). */
  hints: { destructive: boolean; idempotent: boolean; openWorld: boolean }
  /** Fingerprint of this listing's name, description, effect and schemas: changes when any of them does. */
  revision: string
}

/** A tool's hints, from its effect unless the tool says more (see Tool.hints). */
export function hintsOf(tool: Tool): ToolListing['hints'] {
  return {
    destructive: tool.hints?.destructive ?? (tool.effect === 'write' || tool.effect === 'destructive'),
    idempotent: tool.hints?.idempotent ?? tool.effect === 'read',
    openWorld: tool.hints?.openWorld ?? tool.effect === 'external',
  }
}

export function listingOf(
  entry: CatalogEntry,
  inputSchema = inputSchemaOfEntry(entry),
  outputSchema = entry.schemas?.output ?? outputSchemaOf(entry.tool),
): ToolListing {
  const { tool } = entry
  const promised = {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    effect: tool.effect,
    input_schema: inputSchema,
    output_schema: outputSchema,
    hints: hintsOf(tool),
  }
  return { id: entry.id, ...promised, revision: fingerprint(JSON.stringify(promised)) }
}

/**
 * A short, stable tag of what a catalog promises, so clients can tell when to refresh tools: it changes
 * when a tool comes or goes, or when any tool's own revision does.
 */
export function catalogRevision(listings: readonly ToolListing[]): string {
  return fingerprint(listings.map((listing) => `${listing.id}@${listing.revision}`).join('\n'))
}
