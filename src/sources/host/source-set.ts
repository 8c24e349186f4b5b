import { ToolError } from '../../core/errors'
import { parseManifest, parseManifestText, type SourceDefinition, type TenantSourceKind } from '../manifest'
import type { ManifestDefaults } from '../reference-shape'
import type { SourceLoadContext, SourceOwner } from '../types'
import { createHostedSource, type HostedSource } from './hosted-source'

/** A manifest as a feed or a storage prefix holds it. */
export interface ManifestFile {
  text: string
  format: 'json' | 'yaml'
  /** What the file's place supplies (a plugin folder's worker); the id is always the file's. */
  defaults?: ManifestDefaults
}

/** Why a stored manifest cannot be used: the source shows this as its error. */
export interface BrokenDefinition {
  error: string
  revision: string
}

/** What a source id should hold: a (re)read manifest, or what it holds now ('unchanged'). */
export type Wanted = ManifestFile | 'unchanged'

export interface SourceSetDeps {
  owner: SourceOwner
  tenantKinds: readonly TenantSourceKind[]
  context(definition: SourceDefinition): (signal: AbortSignal) => SourceLoadContext
  log: SourceLoadContext['log']
  /** Called on every change of a source's state or tools; `reloadWanted` when the source asks to be listed again. */
  changed(source: HostedSource, reloadWanted: boolean): void
}

/**
 * The sources of one owner (an operator feed, a tenant), by id: each kept while its manifest's revision
 * is unchanged, replaced (and loaded) when it changes, closed when it goes.
 */
/** A tool whose source was removed: kept by name so a call to it says so (503), not that it never was. */
export interface RemovedTool {
  source: string
  /** When the source was removed (ISO 8601). */
  since: string
}

export interface SourceSet {
  readonly entries: ReadonlyMap<string, HostedSource>
  /** The tools of sources this set removed, by name (the most recent 1,000, on this instance). */
  readonly removed: ReadonlyMap<string, RemovedTool>
  /** Sorted by id: the order their tools take in the catalog. */
  ordered(): HostedSource[]
  /** Makes the set hold exactly these manifests; answers whether anything changed. */
  reconcile(files: ReadonlyMap<string, Wanted>): Promise<boolean>
  /** A source for one checked definition, loading but not yet in the set (PUT /v1/sources/{id} checks it first). */
  candidate(id: string, definition: SourceDefinition): HostedSource
  /** Puts a candidate in place of the source of its id, which is closed. */
  adopt(candidate: HostedSource): void
  remove(id: string): HostedSource | undefined
  close(): Promise<void>
}

// Names of removed sources' tools remembered per set: enough for a catalog, bounded against churn.
const maxRemembered = 1_000

export function createSourceSet(deps: SourceSetDeps): SourceSet {
  const entries = new Map<string, HostedSource>()
  const removed = new Map<string, RemovedTool>()

  function bury(source: HostedSource): void {
    const since = new Date().toISOString()
    for (const name of source.knownNames) {
      removed.delete(name)
      removed.set(name, { source: source.id, since })
    }
    for (const name of removed.keys()) {
      if (removed.size <= maxRemembered) break
      removed.delete(name)
    }
  }

  function hosted(id: string, definition: SourceDefinition | BrokenDefinition, previous?: HostedSource) {
    return createHostedSource({
      owner: deps.owner,
      id,
      definition,
      ...(previous ? { knownNames: previous.knownNames } : {}),
      // A broken definition never loads, so never asks for a context.
      context:
        'error' in definition
          ? () => {
              throw new Error(definition.error)
            }
          : deps.context(definition),
      log: deps.log,
      changed: deps.changed,
    })
  }

  /** Parses a stored manifest; one that does not parse (any more) is a source in error, not a crash. */
  async function definitionOf(id: string, file: ManifestFile): Promise<SourceDefinition | BrokenDefinition> {
    try {
      const json = await parseManifestText(file.text, file.format, `${id}.${file.format}`)
      const definition = parseManifest(json, deps.owner, {
        tenantKinds: deps.tenantKinds,
        defaults: { ...file.defaults, id },
      })
      if (definition.manifest.id === id) return definition
      return {
        error: `its id is ${definition.manifest.id}, but the file is named ${id}`,
        revision: definition.revision,
      }
    } catch (error) {
      const detail = error instanceof ToolError ? `${error.message} ${error.hint}` : String(error)
      return { error: `the manifest is not valid: ${detail}`, revision: `invalid-${file.text.length}` }
    }
  }

  function put(id: string, definition: SourceDefinition | BrokenDefinition): HostedSource {
    const current = entries.get(id)
    const next = hosted(id, definition, current)
    entries.set(id, next)
    // Loads are started, not awaited: callers wait for them, bounded, where they need the tools.
    void next.load()
    if (current) void current.close()
    return next
  }

  return {
    entries,
    removed,
    ordered: () => [...entries.values()].sort((a, b) => a.id.localeCompare(b.id)),
    async reconcile(files) {
      let changed = false
      for (const [id, file] of files) {
        if (file === 'unchanged') continue
        const definition = await definitionOf(id, file)
        if (entries.get(id)?.revision === definition.revision) continue
        put(id, definition)
        changed = true
      }
      for (const [id, current] of entries) {
        if (files.has(id)) continue
        entries.delete(id)
        bury(current)
        changed = true
        void current.close()
      }
      return changed
    },
    candidate(id, definition) {
      const next = hosted(id, definition, entries.get(id))
      void next.load()
      return next
    },
    adopt(candidate) {
      const current = entries.get(candidate.id)
      entries.set(candidate.id, candidate)
      if (current && current !== candidate) void current.close()
    },
    remove(id) {
      const current = entries.get(id)
      if (current) {
        entries.delete(id)
        bury(current)
      }
      return current
    },
    async close() {
      const all = [...entries.values()]
      entries.clear()
      await Promise.all(all.map((source) => source.close()))
    },
  }
}
