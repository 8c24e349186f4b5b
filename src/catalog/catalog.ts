import { mayCall, type Principal } from '../auth/principal'
import { closestName } from '../core/closest-name'
import { ToolError } from '../core/errors'
import { referenceTool } from '../core/reference-names'
import type { Tool } from '../tools/tool'
import { builtinEntries } from './builtins'
import { type CatalogEntry, catalogRevision, inputSchemaOfEntry, listingOf, type ToolListing } from './entry'

/** The tools one principal sees, with their listings and the revision they add up to. */
export interface CatalogView {
  readonly revision: string
  /** The tools the principal may see and call, in catalog order: built-ins, operator sources, tenant sources. */
  readonly entries: readonly CatalogEntry[]
  readonly listings: readonly ToolListing[]
  /** Tools of sources that are not ready (or gone) which the principal could call: not offered to models. */
  readonly unavailable: ReadonlyArray<{ name: string; id: string } & UnavailableTool>
}

/** A tenant's source tools as the sources hold them (sources/host assembles them). */
export interface TenantTools {
  /** Tools of ready sources, operator first, each source's in its own order. */
  readonly tools: readonly CatalogEntry[]
  readonly byName: ReadonlyMap<string, CatalogEntry>
  /** Built-ins whose input handling a compat pack extends, by name. */
  readonly overrides: ReadonlyMap<string, CatalogEntry>
  /**
   * Tools not offered now, by name: their source is loading, in error, disabled or removed (with why
   * and since when). A call to one is 503 naming them; the key's catalog lists them as unavailable.
   */
  readonly missing: ReadonlyMap<string, UnavailableTool>
}

/** A tool the catalog knows but does not offer now. */
export interface UnavailableTool {
  source: string
  /** The source's status: loading, error, disabled, or removed. */
  status: string
  reason: string
  /** Since when (ISO 8601). */
  since: string
}

/** What the catalog needs of the sources: each tenant's tools, live. */
export interface ToolSources {
  /** Whether any operator source changes how a built-in reads its input (compat packs). */
  readonly hasOverrides: boolean
  /** True while a feed given at start is still being read: its overrides may not be known yet. */
  readonly feedsPending: boolean
  /** The operator's tools and the tenant's (only the operator's when tenant is undefined). */
  /**
   * `forCall`: a call is about to resolve a tool, so a source on its first load is waited for (bounded);
   * a listing never waits on an upstream (an MCP server, an OpenAPI document at a URL).
   */
  forTenant(tenant: string | undefined, use?: { forCall: boolean }): Promise<TenantTools>
}

/**
 * The catalog of one app: built-in tools plus the tools of sources (operator and per tenant), live.
 * Schemas are derived on first use, once per tool: a cold start that serves one call never pays for
 * the rest, and a source that changes only costs its own tools.
 */
export interface Catalog {
  /** The built-in tools this app enables, in catalog order. */
  readonly builtins: readonly CatalogEntry[]
  /** A built-in by name, as the tenant-independent parts of the service (health, context) need. */
  builtin(name: string): CatalogEntry | undefined
  /**
   * What a principal may see and call now. Without one (an anonymous read of /openapi.json on a
   * server with keys): the built-ins and the operator's sources, no tenant's.
   */
  view(principal: Principal | undefined): Promise<CatalogView>
  /**
   * The tool a tenant's catalog holds under `name` (the principal's scope is the caller's check). Throws
   * not_found, naming the source's status when a source tool is gone.
   */
  resolve(tenant: string, name: string): Promise<CatalogEntry>
  /** The listing of a tool: id, name, effect, JSON Schemas and revision. */
  listing(entry: CatalogEntry): ToolListing
  /** The JSON Schema a caller's input must match (fields with defaults are optional). */
  inputSchema(entry: CatalogEntry): Record<string, unknown>
}

export function createCatalog(tools: readonly Tool[], sources?: ToolSources): Catalog {
  const builtins = builtinEntries(tools)
  const byName = new Map(builtins.map((entry) => [entry.name, entry]))
  const listings = new WeakMap<CatalogEntry, ToolListing>()
  const inputSchemas = new WeakMap<CatalogEntry, Record<string, unknown>>()
  // Per principal (those of configured keys live as long as the app): the view, with the tenant's tools
  // it was built from. forTenant answers the same object until a change, so that is the test.
  const views = new WeakMap<Principal, { tenant: TenantTools | undefined; view: CatalogView }>()
  const publicView = {} as Principal

  function inputSchema(entry: CatalogEntry): Record<string, unknown> {
    let schema = inputSchemas.get(entry)
    if (!schema) {
      schema = inputSchemaOfEntry(entry)
      inputSchemas.set(entry, schema)
    }
    return schema
  }

  function listing(entry: CatalogEntry): ToolListing {
    let found = listings.get(entry)
    if (!found) {
      found = listingOf(entry, inputSchema(entry))
      listings.set(entry, found)
    }
    return found
  }

  /** Built-ins (with the operator's compat overrides), then every ready source's tools. */
  function entriesOf(tenant: TenantTools | undefined): CatalogEntry[] {
    if (!tenant) return [...builtins]
    const overridden = builtins.map((entry) => tenant.overrides.get(entry.name) ?? entry)
    return [...overridden, ...tenant.tools]
  }

  return {
    builtins,
    builtin: (name) => byName.get(name),
    listing,
    inputSchema,
    async view(principal) {
      // Asked first in any case: it is what notices changes other instances made (cheap when it knows).
      const tenant = sources ? await sources.forTenant(principal?.tenant) : undefined
      const key = principal ?? publicView
      const cached = views.get(key)
      if (cached && cached.tenant === tenant) return cached.view
      const entries = entriesOf(tenant).filter((entry) => !principal || mayCall(principal, entry))
      const listed = entries.map(listing)
      const unavailable = [...(tenant?.missing ?? [])]
        .map(([name, gone]) => ({ name, id: `${gone.source}:${name}`, ...gone }))
        .filter((gone) => !principal || mayCall(principal, gone))
      const view: CatalogView = { revision: catalogRevision(listed), entries, listings: listed, unavailable }
      views.set(key, { tenant, view })
      return view
    },
    async resolve(tenant, name) {
      const builtin = byName.get(name)
      // Built-ins are never shadowed; a compat override only changes how a built-in reads its input. So
      // without overrides a built-in is answered without asking the sources: 0.39 µs instead of 0.87 µs
      // more for forTenant (Node 20 here), and no storage poll of the tenant's sources on its calls.
      if (builtin && !sources?.hasOverrides && !sources?.feedsPending) return builtin
      const sourced = sources ? await sources.forTenant(tenant, { forCall: true }) : undefined
      if (builtin) return sourced?.overrides.get(name) ?? builtin
      const found = sourced?.byName.get(name)
      if (found) return found
      const gone = sourced?.missing.get(name)
      if (gone) {
        // Known, but not offered now: the call may work later (a source loading, disabled, removed).
        throw new ToolError(
          'unavailable',
          `${name} is unavailable since ${gone.since}: its source ${gone.source} is ${gone.status} (${gone.reason.replace(/\.$/, '')}).`,
          {
            hint:
              gone.status === 'loading'
                ? 'Retry in a few seconds: the source is loading.'
                : `GET /v1/sources/${gone.source} shows its state; the tool is served again (with its latest schema) once its source is back.`,
            details: { source: gone.source, source_status: gone.status, since: gone.since },
            headers: { 'retry-after': gone.status === 'loading' ? '5' : '60' },
          },
        )
      }
      throw unknownTool(name, [...byName.keys(), ...(sourced?.byName.keys() ?? [])])
    },
  }
}

/**
 * A 404 for a name the catalog does not hold, with the name meant where one is clear: a reference
 * system's name for a tool here (`shell` is execute_command), or a close spelling of one.
 */
function unknownTool(name: string, names: readonly string[]): ToolError {
  const reference = referenceTool(name)
  const meant = reference && names.includes(reference.name) ? reference.name : closestName(name, names)
  const why =
    reference && meant === reference.name
      ? ` (${name} is reference ${reference.reference}'s name for it${reference.pack ? `; TOOLPORT_COMPAT_PACKS=${reference.pack} serves it under that name too` : ''})`
      : ''
  return new ToolError('not_found', `There is no tool named ${JSON.stringify(name.slice(0, 100))}.`, {
    hint: meant
      ? `Did you mean ${meant}?${why} GET /v1/tools lists the tools this key may call.`
      : 'GET /v1/tools lists the tools this key may call; use one of their names.',
    ...(meant ? { details: { did_you_mean: meant } } : {}),
  })
}
