import { mayCall, type Principal } from '../auth/principal'
import { ToolError } from '../core/errors'
import type { SourceHost, TenantSources } from '../sources/host/source-host'
import type { Tool } from '../tools/tool'
import { inputSchemaOf } from '../tools/tool-schemas'
import { type CatalogEntry, catalogEntry, catalogRevision } from './entry'

/** The tools one principal sees, with their catalog entries and the revision they add up to. */
export interface Catalog {
  readonly revision: string
  /** The tools the principal may see and call, in catalog order: built-ins, operator sources, tenant sources. */
  readonly tools: readonly Tool[]
  readonly entries: readonly CatalogEntry[]
}

/**
 * The catalog of one app: built-in tools plus the tools of sources (operator and per tenant), live.
 * Schemas are derived on first use, once per tool: a cold start that serves one call never pays for
 * the rest, and a source that changes only costs its own tools.
 */
export interface ToolRegistry {
  /** The built-in tools this app enables, in catalog order. */
  readonly builtins: readonly Tool[]
  /** A built-in by name, as the tenant-independent parts of the service (health, context) need. */
  builtin(name: string): Tool | undefined
  /**
   * What a principal may see and call now. Without one (an anonymous read of /openapi.json on a
   * server with keys): the built-ins and the operator's sources, no tenant's.
   */
  catalog(principal: Principal | undefined): Promise<Catalog>
  /**
   * The tool a tenant's catalog holds under `name` (the principal's scope is the caller's check). Throws
   * not_found, naming the source's status when a source tool is gone.
   */
  resolve(tenant: string, name: string): Promise<Tool>
  /** The catalog entry of a tool: id, name, effect, JSON Schemas and revision. */
  entry(tool: Tool): CatalogEntry
  /** The JSON Schema a caller's input must match (fields with defaults are optional). */
  inputSchema(tool: Tool): Record<string, unknown>
  /** The sources behind the catalog; undefined when the app serves built-ins only. */
  readonly sources: SourceHost | undefined
}

export function createRegistry(builtins: readonly Tool[], sources?: SourceHost): ToolRegistry {
  const byName = new Map(builtins.map((tool) => [tool.name, tool]))
  const entries = new WeakMap<Tool, CatalogEntry>()
  const inputSchemas = new WeakMap<Tool, Record<string, unknown>>()
  // Per principal (those of configured keys live as long as the app): the catalog, with the assembled
  // sources it was built from. forTenant answers the same object until a change, so that is the test.
  const catalogs = new WeakMap<Principal, { tenant: TenantSources | undefined; catalog: Catalog }>()
  const publicView = {} as Principal

  function inputSchema(tool: Tool): Record<string, unknown> {
    let schema = inputSchemas.get(tool)
    if (!schema) {
      schema = inputSchemaOf(tool)
      inputSchemas.set(tool, schema)
    }
    return schema
  }

  function entry(tool: Tool): CatalogEntry {
    let found = entries.get(tool)
    if (!found) {
      found = catalogEntry(tool, inputSchema(tool))
      entries.set(tool, found)
    }
    return found
  }

  /** Built-ins (with the operator's compat overrides), then every ready source's tools. */
  function toolsOf(tenant: TenantSources | undefined): Tool[] {
    if (!tenant) return [...builtins]
    const overridden = builtins.map((tool) => tenant.overrides.get(tool.name) ?? tool)
    return [...overridden, ...tenant.tools]
  }

  return {
    builtins,
    builtin: (name) => byName.get(name),
    sources,
    entry,
    inputSchema,
    async catalog(principal) {
      // Asked first in any case: it is what notices changes other instances made (cheap when it knows).
      const tenant = sources ? await sources.forTenant(principal?.tenant) : undefined
      const key = principal ?? publicView
      const cached = catalogs.get(key)
      if (cached && cached.tenant === tenant) return cached.catalog
      const tools = toolsOf(tenant).filter((tool) => !principal || mayCall(principal, tool))
      const listed = tools.map(entry)
      const catalog: Catalog = { revision: catalogRevision(listed), tools, entries: listed }
      catalogs.set(key, { tenant, catalog })
      return catalog
    },
    async resolve(tenant, name) {
      const builtin = byName.get(name)
      // Built-ins are never shadowed; a compat override only changes how a built-in reads its input.
      if (builtin && !sources?.hasOverrides && !sources?.feedsPending) return builtin
      const sourced = sources ? await sources.forTenant(tenant) : undefined
      if (builtin) return sourced?.overrides.get(name) ?? builtin
      const found = sourced?.byName.get(name)
      if (found) return found
      const gone = sourced?.missing.get(name)
      throw new ToolError('not_found', `There is no tool named ${JSON.stringify(name)}.`, {
        hint: gone
          ? `${name} belongs to the source ${gone.source}, which is ${gone.status}: ${gone.reason} GET /v1/sources/${gone.source} shows its state.`
          : 'GET /v1/tools lists the tools this key may call; use one of their names.',
        ...(gone ? { details: { source: gone.source, source_status: gone.status } } : {}),
      })
    },
  }
}
