import type { TenantTools, UnavailableTool } from '../../catalog/catalog'
import type { CatalogEntry } from '../../catalog/entry'
import type { SourceStatus } from '../types'
import type { HostedSource } from './hosted-source'
import type { RemovedTool } from './source-set'

/** A tenant's source tools, ready to list and call, and what the catalog knows of tools that are gone. */
export interface TenantSources extends TenantTools {
  readonly missing: ReadonlyMap<string, UnavailableTool>
  readonly statuses: SourceStatus[]
}

/**
 * A tool name as a model tells names apart: case, "-", "." and runs of "_" do not count, nor "_" at
 * either end. Two names that fold alike are one name: Read_File, read-file and read_file_ beside the
 * built-in read_file would let a model call the wrong one.
 */
export function foldedName(name: string): string {
  return name
    .toLowerCase()
    .replace(/[-._]+/g, '_')
    .replace(/^_+|_+$/g, '')
}

/** Why `name` cannot join beside `other` (a name it folds alike with), owned by `owner`; a conflict message. */
function clashMessage(name: string, other: string, owner: string | undefined): string {
  const whose = owner === undefined ? `the built-in ${other}` : `the tool ${other} of the source ${owner}`
  return other === name
    ? `its tool ${name} has the name of ${whose}`
    : `its tool ${name} spells the name of ${whose} another way`
}

/** Why a ready source's tools cannot join: a name a built-in or one of `others` (ready) has, in any spelling. */
export function clashOf(
  source: HostedSource,
  others: readonly HostedSource[],
  builtins: ReadonlyMap<string, unknown>,
): string | undefined {
  // Each name folded once: a source of 1,000 tools beside another of 1,000 is 2,000 foldings, not a million.
  const taken = foldedNames(builtins.keys())
  const owners = new Map<string, string>()
  for (const other of others) {
    if (other.state !== 'ready') continue
    for (const tool of other.tools) {
      const folded = foldedName(tool.name)
      if (taken.has(folded)) continue
      taken.set(folded, tool.name)
      owners.set(tool.name, other.id)
    }
  }
  return placementOf(source, taken, owners).conflict
}

/**
 * The name a source's tool takes when a built-in has its own: the source's id before it
 * (`excel_analyze` of the source `excel` is `excel_excel_analyze`; its id stays `excel:excel_analyze`).
 */
export function namespacedName(source: string, name: string): string {
  return `${source.replace(/-/g, '_')}_${name}`
}

/** How a source's tools join the catalog: under their names, some namespaced, or not at all (why). */
interface Placement {
  conflict?: string
  /** Tools whose name a built-in has, and the name each is served under. */
  renamed: Map<string, string>
}

/**
 * Where the source's tools go beside `taken` (folded → as spelled; `owners` names the source of each
 * that is not a built-in): a tool whose name a built-in has is served under its namespaced name when
 * that is free; a name another source has, or two of its own that fold alike, is a conflict.
 */
function placementOf(
  source: HostedSource,
  taken: ReadonlyMap<string, string>,
  owners: ReadonlyMap<string, string>,
): Placement {
  const renamed = new Map<string, string>()
  const own = ownClash(source)
  if (own) return { conflict: own, renamed }
  for (const tool of source.tools) {
    const other = taken.get(foldedName(tool.name))
    if (other === undefined) continue
    const owner = owners.get(other)
    const namespaced = namespacedName(source.id, tool.name)
    const free =
      owner === undefined &&
      toolNameFits(namespaced) &&
      !taken.has(foldedName(namespaced)) &&
      !source.tools.some((mine) => foldedName(mine.name) === foldedName(namespaced))
    if (!free) return { conflict: clashMessage(tool.name, other, owner), renamed }
    renamed.set(tool.name, namespaced)
  }
  return { renamed }
}

/** The platforms' tool name rule (declared.ts toolNamePattern), which a namespaced name must keep. */
function toolNameFits(name: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/.test(name)
}

/** A source tool under another name: the same tool and id, listed and called by `name`. */
function renamedEntry(entry: CatalogEntry, name: string): CatalogEntry {
  return { ...entry, name, tool: { ...entry.tool, name } }
}

/** Two tools of one source whose names fold alike (an MCP server's `Search` and `search`), as a conflict message. */
function ownClash(source: HostedSource): string | undefined {
  const seen = new Map<string, string>()
  for (const tool of source.tools) {
    const folded = foldedName(tool.name)
    const other = seen.get(folded)
    if (other !== undefined) return `its tools ${other} and ${tool.name} spell one name two ways`
    seen.set(folded, tool.name)
  }
  return undefined
}

function foldedNames(names: Iterable<string>): Map<string, string> {
  const folded = new Map<string, string>()
  for (const name of names) folded.set(foldedName(name), name)
  return folded
}

/**
 * Puts the sources together in order (built-ins, then operator sources, then the tenant's, each by id):
 * a tool whose name is already taken puts its whole source in error, naming both, so a source can
 * never shadow a built-in or an earlier source.
 */
export function assembleTenant(
  sources: readonly HostedSource[],
  builtins: ReadonlyMap<string, unknown>,
  removed: Iterable<[string, RemovedTool]> = [],
): TenantSources {
  const tools: CatalogEntry[] = []
  const byName = new Map<string, CatalogEntry>()
  const overrides = new Map<string, CatalogEntry>()
  const missing = new Map<string, UnavailableTool>()
  const owners = new Map<string, string>()
  // Folded names already in the catalog (foldedName), with their spelling: the built-ins first.
  const taken = foldedNames(builtins.keys())
  const statuses: SourceStatus[] = []
  const operatorIds = new Set(sources.filter((source) => source.owner.kind === 'operator').map((source) => source.id))
  for (const source of sources) {
    let status = source.status()
    if (source.owner.kind === 'tenant' && operatorIds.has(source.id)) {
      // Ids name tools (id:tool, id:* in key scopes): a tenant source must not borrow an operator's.
      status = {
        ...status,
        status: 'error',
        reason: `the id ${source.id} is an operator source's; register it under another id`,
        tools: [],
      }
    } else if (source.state === 'ready') {
      const { conflict, renamed } = placementOf(source, taken, owners)
      if (conflict) {
        status = { ...status, status: 'error', reason: `${conflict}; rename one of them`, tools: [] }
      } else {
        for (const declared of source.tools) {
          const as = renamed.get(declared.name)
          const tool = as ? renamedEntry(declared, as) : declared
          tools.push(tool)
          byName.set(tool.name, tool)
          owners.set(tool.name, source.id)
          taken.set(foldedName(tool.name), tool.name)
        }
        if (renamed.size > 0) {
          const notes = [...renamed].map(
            ([name, as]) => `${name} is served as ${as} (${source.id}:${name}): the built-in ${name} has its name`,
          )
          status = {
            ...status,
            tools: status.tools.map((name) => renamed.get(name) ?? name),
            reason: [status.reason, ...notes].filter(Boolean).join('; '),
          }
        }
        if (source.owner.kind === 'operator') {
          for (const [name, tool] of source.overrides) if (!overrides.has(name)) overrides.set(name, tool)
        }
      }
    }
    if (status.status !== 'ready') {
      for (const known of source.knownNames) {
        // A tool a built-in's name would have been served under the source's namespace.
        const name = builtins.has(known) ? namespacedName(source.id, known) : known
        if (!byName.has(name) && !builtins.has(name)) {
          missing.set(name, {
            source: source.id,
            status: status.status,
            reason: status.reason ?? 'it is still loading.',
            since: status.since,
          })
        }
      }
    }
    statuses.push(status)
  }
  // Tools of removed sources, until a tool of that name is served again.
  for (const [known, gone] of removed) {
    const name = builtins.has(known) ? namespacedName(gone.source, known) : known
    if (byName.has(name) || builtins.has(name) || missing.has(name)) continue
    missing.set(name, { source: gone.source, status: 'removed', reason: 'its source was removed', since: gone.since })
  }
  return { tools, byName, overrides, missing, statuses }
}
