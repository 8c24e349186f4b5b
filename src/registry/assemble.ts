import type { SourceState, SourceStatus } from '../sources/types'
import type { Tool } from '../tools/tool'
import type { HostedSource } from './source-entry'

/** A tenant's source tools, ready to list and call, and what the catalog knows of tools that are gone. */
export interface TenantSources {
  /** Tools of ready sources, operator first, each source's in its own order. */
  tools: readonly Tool[]
  byName: ReadonlyMap<string, Tool>
  /** Built-ins whose input handling a compat pack extends, by name. */
  overrides: ReadonlyMap<string, Tool>
  /** Names of tools whose source is not ready (loading, in error, in conflict), with why. */
  missing: ReadonlyMap<string, { source: string; status: SourceState; reason: string }>
  statuses: SourceStatus[]
}

/** Why a ready source's tools cannot join: a name a built-in or one of `others` (ready) has. */
export function clashOf(
  source: HostedSource,
  others: readonly HostedSource[],
  builtins: ReadonlyMap<string, Tool>,
): string | undefined {
  for (const tool of source.tools) {
    if (builtins.has(tool.name)) return `its tool ${tool.name} has the name of the built-in ${tool.name}`
    const owner = others.find(
      (other) => other.state === 'ready' && other.tools.some((taken) => taken.name === tool.name),
    )
    if (owner) return `its tool ${tool.name} has the name of a tool of the source ${owner.id}`
  }
  return undefined
}

/**
 * Puts the sources together in order (built-ins, then operator sources, then the tenant's, each by id):
 * a tool whose name is already taken puts its whole source in error, naming both, so a source can
 * never shadow a built-in or an earlier source.
 */
export function assembleTenant(sources: readonly HostedSource[], builtins: ReadonlyMap<string, Tool>): TenantSources {
  const tools: Tool[] = []
  const byName = new Map<string, Tool>()
  const overrides = new Map<string, Tool>()
  const missing = new Map<string, { source: string; status: SourceState; reason: string }>()
  const owners = new Map<string, string>()
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
      const conflict = source.tools
        .map((tool) => {
          if (builtins.has(tool.name)) return `its tool ${tool.name} has the name of the built-in ${tool.name}`
          const owner = owners.get(tool.name)
          return owner ? `its tool ${tool.name} has the name of a tool of the source ${owner}` : undefined
        })
        .find((problem) => problem !== undefined)
      if (conflict) {
        status = { ...status, status: 'error', reason: `${conflict}; rename one of them`, tools: [] }
      } else {
        for (const tool of source.tools) {
          tools.push(tool)
          byName.set(tool.name, tool)
          owners.set(tool.name, source.id)
        }
        if (source.owner.kind === 'operator') {
          for (const [name, tool] of source.overrides) if (!overrides.has(name)) overrides.set(name, tool)
        }
      }
    }
    if (status.status !== 'ready') {
      for (const name of source.knownNames) {
        if (!byName.has(name) && !builtins.has(name)) {
          missing.set(name, {
            source: source.id,
            status: status.status,
            reason: status.reason ?? 'it is still loading.',
          })
        }
      }
    }
    statuses.push(status)
  }
  return { tools, byName, overrides, missing, statuses }
}
