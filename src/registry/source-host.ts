import { ToolError } from '../core/errors'
import type { Logger } from '../core/logger'
import type { HttpClient } from '../net/http'
import { parseManifest, parseManifestText, type SourceDefinition, type TenantSourceKind } from '../sources/manifest'
import type { ProcessStarter, SourceLoadContext, SourceOwner, SourceStatus } from '../sources/types'
import type { ObjectStore } from '../storage/store'
import type { Tool } from '../tools/tool'
import { assembleTenant, type TenantSources } from './assemble'
import { checkOutboundUrls } from './outbound-urls'
import { createHostedSource, type HostedSource, loadTimeoutMs } from './source-entry'
import { createSourceStore, type SourceStore } from './source-store'

export type { TenantSources }

/** A manifest file as a feed hands it over (a file of the operator's folder, a pack). */
export interface FeedFile {
  /** The file name; its stem is the source id. */
  name: string
  text: string
  format: 'json' | 'yaml'
}

export interface SourceHostDeps {
  storage: ObjectStore
  builtins: readonly Tool[]
  log: Logger
  /** How often this instance looks for sources another instance changed (tenant and operator storage). */
  refreshMs: number
  /** How often a ready source whose tools come from an upstream (MCP, OpenAPI at a URL) lists them again. */
  upstreamRefreshMs: number
  tenantKinds: readonly TenantSourceKind[]
  /** Sources per tenant. */
  maxTenantSources: number
  /** The service's outbound client: every address rule, TOOLPORT_FETCH_ALLOW_HOSTS the only exception. */
  http: HttpClient | undefined
  /** The same client, also allowing the hosts an operator manifest names (its upstream may be private). */
  httpAllowing: ((hosts: readonly string[]) => HttpClient) | undefined
  processes: ProcessStarter | undefined
  keepWarm: boolean
  /** Values for operator manifests' `{ "secret": NAME }`: the server's environment. */
  environment: Readonly<Record<string, string | undefined>>
  /** Values for a tenant's manifests: the secrets of its keys (keys file). */
  tenantSecrets(tenant: string): Readonly<Record<string, string>>
  maxResponseChars: number
  now?: () => number
}

/**
 * The live set of sources of one app: operator sources from feeds (compat packs, the sources folder,
 * the storage prefix sources/operator/) and each tenant's own (sources/tenants/{tenant}/, written by
 * PUT /v1/sources/{id}). A change made here is visible at once; one made by another instance within
 * refreshMs, the next time this instance serves that tenant.
 */
export interface SourceHost {
  /** Grows with every change anywhere; catalogs cache by it. */
  readonly version: number
  /** Whether any operator source changes how a built-in reads its input (compat packs). */
  readonly hasOverrides: boolean
  /** True while a feed given at start is still being read: its overrides may not be known yet. */
  readonly feedsPending: boolean
  /** The operator's sources and the tenant's (only the operator's when tenant is undefined). */
  forTenant(tenant: string | undefined): Promise<TenantSources>
  /** The operator's sources, then the tenant's, with their status. */
  statuses(tenant: string): Promise<SourceStatus[]>
  put(tenant: string, id: string, json: unknown): Promise<{ status: SourceStatus; created: boolean }>
  remove(tenant: string, id: string): Promise<boolean>
  /** Replaces what one operator feed declares (the runtime's folder watcher calls this). */
  setFeed(feed: string, files: readonly FeedFile[]): Promise<void>
  close(): Promise<void>
}

/** Why a stored manifest cannot be used: the source shows this as its error. */
interface BrokenDefinition {
  error: string
  revision: string
}

/** What a source id should hold after a poll: a (re)read manifest, or what it holds now ('keep'). */
type Wanted = SourceDefinition | BrokenDefinition | 'keep'

interface TenantState {
  entries: Map<string, HostedSource>
  etags: Map<string, string>
  checkedAt: number
  checking: Promise<void> | undefined
}

// A tenant's first call after a restart waits this long at most for its sources to load.
const loadWaitMs = 10_000
const operatorFeedOrder = ['compat', 'folder', 'storage']

export function createSourceHost(deps: SourceHostDeps): SourceHost {
  const now = deps.now ?? Date.now
  let version = 1
  const feeds = new Map<string, Map<string, HostedSource>>()
  const tenants = new Map<string, TenantState>()
  const assembled = new Map<string, { version: number; sources: TenantSources }>()
  const operatorStore = createSourceStore(deps.storage, 'sources/operator/')
  const operatorStorage = {
    etags: new Map<string, string>(),
    checkedAt: 0,
    checking: undefined as Promise<void> | undefined,
  }
  const builtinNames = new Map(deps.builtins.map((tool) => [tool.name, tool]))
  const overridesAt = { version: 0, value: false }
  const pendingFeeds = new Set<Promise<void>>()

  const changed = (source: HostedSource, reloadWanted: boolean) => {
    version++
    if (reloadWanted) void source.load()
  }

  function contextFor(owner: SourceOwner, definition: SourceDefinition) {
    return (signal: AbortSignal): SourceLoadContext => ({
      owner,
      http: owner.kind === 'operator' && deps.httpAllowing ? deps.httpAllowing(explicitHosts(definition)) : deps.http,
      secret: (name) => (owner.kind === 'operator' ? deps.environment[name] : deps.tenantSecrets(owner.tenant)[name]),
      log: deps.log,
      signal,
      builtins: builtinNames,
      maxResponseChars: deps.maxResponseChars,
      processes: deps.processes,
      keepWarm: deps.keepWarm,
    })
  }

  function hosted(
    owner: SourceOwner,
    id: string,
    definition: SourceDefinition | BrokenDefinition,
    previous?: HostedSource,
  ) {
    return createHostedSource({
      owner,
      id,
      definition,
      ...(previous ? { knownNames: previous.knownNames } : {}),
      // A broken definition never loads, so never asks for a context.
      context:
        'error' in definition
          ? () => {
              throw new Error(definition.error)
            }
          : contextFor(owner, definition),
      log: deps.log,
      changed,
    })
  }

  /** Parses a stored manifest; one that does not parse (any more) is a source in error, not a crash. */
  async function definitionOf(
    owner: SourceOwner,
    id: string,
    text: string,
    format: 'json' | 'yaml',
  ): Promise<SourceDefinition | BrokenDefinition> {
    try {
      const definition = parseManifest(await parseManifestText(text, format, `${id}.${format}`), owner, {
        tenantKinds: deps.tenantKinds,
      })
      if (definition.manifest.id !== id) {
        return {
          error: `its id is ${definition.manifest.id}, but the file is named ${id}`,
          revision: definition.revision,
        }
      }
      return definition
    } catch (error) {
      const detail = error instanceof ToolError ? `${error.message} ${error.hint}` : String(error)
      return { error: `the manifest is not valid: ${detail}`, revision: `invalid-${text.length}` }
    }
  }

  /**
   * Puts new and changed sources in place and starts loading them (callers wait for loads, bounded,
   * where they need the tools), and closes removed ones.
   */
  async function reconcile(
    entries: Map<string, HostedSource>,
    owner: SourceOwner,
    wanted: Map<string, Wanted>,
  ): Promise<void> {
    let changes = 0
    for (const [id, definition] of wanted) {
      const current = entries.get(id)
      if (definition === 'keep' || (current && current.revision === definition.revision)) continue
      changes++
      const next = hosted(owner, id, definition, current)
      entries.set(id, next)
      void next.load()
      if (current) void current.close()
    }
    for (const [id, current] of entries) {
      if (wanted.has(id)) continue
      entries.delete(id)
      changes++
      void current.close()
    }
    if (changes > 0) version++
  }

  async function refreshOperatorStorage(): Promise<void> {
    if (now() - operatorStorage.checkedAt < deps.refreshMs) return operatorStorage.checking
    operatorStorage.checking ??= (async () => {
      try {
        const listed = await operatorStore.list()
        const files = await readChanged(operatorStore, listed, operatorStorage.etags, feeds.get('storage'))
        await applyFeed('storage', files)
      } catch (error) {
        deps.log.warn('operator sources in storage could not be read', { cause: String(error) })
      } finally {
        operatorStorage.checkedAt = now()
        operatorStorage.checking = undefined
      }
    })()
    return operatorStorage.checking
  }

  async function applyFeed(feed: string, files: ReadonlyMap<string, ManifestFile | 'unchanged'>): Promise<void> {
    const entries = feeds.get(feed) ?? new Map<string, HostedSource>()
    feeds.set(feed, entries)
    await reconcile(entries, { kind: 'operator' }, await wantedOf({ kind: 'operator' }, files))
  }

  async function wantedOf(
    owner: SourceOwner,
    files: ReadonlyMap<string, ManifestFile | 'unchanged'>,
  ): Promise<Map<string, Wanted>> {
    const wanted = new Map<string, Wanted>()
    for (const [id, file] of files) {
      wanted.set(id, file === 'unchanged' ? 'keep' : await definitionOf(owner, id, file.text, file.format))
    }
    return wanted
  }

  async function refreshTenant(tenant: string): Promise<TenantState> {
    let state = tenants.get(tenant)
    if (!state) {
      state = { entries: new Map(), etags: new Map(), checkedAt: 0, checking: undefined }
      tenants.set(tenant, state)
    }
    const current = state
    if (now() - current.checkedAt >= deps.refreshMs) {
      current.checking ??= (async () => {
        const store = tenantStore(tenant)
        const listed = await store.list()
        const files = await readChanged(store, listed, current.etags, current.entries)
        const owner: SourceOwner = { kind: 'tenant', tenant }
        await reconcile(current.entries, owner, await wantedOf(owner, files))
        current.checkedAt = now()
      })().finally(() => {
        current.checking = undefined
      })
    }
    await current.checking
    return current
  }

  function tenantStore(tenant: string): SourceStore {
    return createSourceStore(deps.storage, `sources/tenants/${tenant}/`)
  }

  function operatorEntries(): HostedSource[] {
    const ordered = [...feeds.keys()].sort((a, b) => operatorFeedOrder.indexOf(a) - operatorFeedOrder.indexOf(b))
    return ordered.flatMap((feed) => [...(feeds.get(feed)?.values() ?? [])].sort((a, b) => a.id.localeCompare(b.id)))
  }

  async function prepare(tenant: string | undefined): Promise<HostedSource[]> {
    if (pendingFeeds.size > 0) await Promise.all(pendingFeeds)
    await refreshOperatorStorage()
    const state = tenant === undefined ? undefined : await refreshTenant(tenant)
    const own = state ? [...state.entries.values()].sort((a, b) => a.id.localeCompare(b.id)) : []
    const all = [...operatorEntries(), ...own]
    const time = now()
    for (const source of all) if (source.retryDue(time, deps.upstreamRefreshMs)) void source.load()
    // Loads in progress get a bounded wait: a source whose upstream hangs must not hold every call.
    const loading = all.filter((source) => source.state === 'loading')
    if (loading.length > 0)
      await Promise.race([Promise.all(loading.map((source) => source.settled())), delay(loadWaitMs)])
    return all
  }

  const host: SourceHost = {
    get version() {
      return version
    },
    get feedsPending() {
      return pendingFeeds.size > 0
    },
    get hasOverrides() {
      if (overridesAt.version !== version) {
        overridesAt.value = operatorEntries().some((source) => source.overrides.size > 0)
        overridesAt.version = version
      }
      return overridesAt.value
    },
    async forTenant(tenant) {
      const sources = await prepare(tenant)
      const key = tenant ?? ''
      const cached = assembled.get(key)
      if (cached && cached.version === version) return cached.sources
      const at = version
      const result = assembleTenant(sources, builtinNames)
      assembled.set(key, { version: at, sources: result })
      return result
    },
    async statuses(tenant) {
      const sources = await prepare(tenant)
      return assembleTenant(sources, builtinNames).statuses
    },
    async put(tenant, id, json) {
      const owner: SourceOwner = { kind: 'tenant', tenant }
      const definition = parseManifest(json, owner, { tenantKinds: deps.tenantKinds })
      if (definition.manifest.id !== id) {
        throw new ToolError('validation', `The manifest's id is ${definition.manifest.id}, but the URL names ${id}.`, {
          hint: `PUT the manifest to /v1/sources/${definition.manifest.id}, or change its id to ${id}.`,
          details: { field: 'id' },
        })
      }
      if (deps.http) await checkOutboundUrls(definition.manifest, deps.http)
      const state = await refreshTenant(tenant)
      const existed = state.entries.has(id)
      if (!existed && state.entries.size >= deps.maxTenantSources) {
        throw new ToolError('size_exceeded', `This tenant has ${state.entries.size} sources, the most allowed.`, {
          hint: 'Remove a source (DELETE /v1/sources/{id}) before adding another.',
        })
      }
      const text = JSON.stringify(json)
      await tenantStore(tenant).write(id, text)
      const previous = state.entries.get(id)
      const next = hosted(owner, id, definition, previous)
      state.entries.set(id, next)
      version++
      if (previous) void previous.close()
      await Promise.race([next.load(), delay(loadTimeoutMs + 1_000)])
      const status = assembleTenant([...operatorEntries(), ...state.entries.values()], builtinNames).statuses.find(
        (entry) => entry.owner === 'tenant' && entry.id === id,
      )
      return { status: status ?? next.status(), created: !existed }
    },
    async remove(tenant, id) {
      const state = await refreshTenant(tenant)
      const current = state.entries.get(id)
      if (!current) return false
      await tenantStore(tenant).remove(id)
      state.entries.delete(id)
      state.etags.delete(id)
      version++
      await current.close()
      return true
    },
    async setFeed(feed, files) {
      const byId = new Map<string, ManifestFile>()
      for (const file of files) {
        const match = /^(.+)\.(json|ya?ml)$/.exec(file.name)
        if (match?.[1]) byId.set(match[1], { text: file.text, format: file.format })
      }
      const applying = applyFeed(feed, byId)
      pendingFeeds.add(applying)
      try {
        await applying
      } finally {
        pendingFeeds.delete(applying)
      }
    },
    async close() {
      const all = [...operatorEntries(), ...[...tenants.values()].flatMap((state) => [...state.entries.values()])]
      feeds.clear()
      tenants.clear()
      await Promise.all(all.map((source) => source.close()))
    },
  }
  return host
}

interface ManifestFile {
  text: string
  format: 'json' | 'yaml'
}

/** Reads the manifests whose etag changed since the last poll; the others are 'unchanged'. */
async function readChanged(
  store: SourceStore,
  listed: Awaited<ReturnType<SourceStore['list']>>,
  etags: Map<string, string>,
  current: ReadonlyMap<string, HostedSource> | undefined,
): Promise<Map<string, ManifestFile | 'unchanged'>> {
  const files = new Map<string, ManifestFile | 'unchanged'>()
  for (const entry of listed) {
    if (etags.get(entry.id) === entry.etag && current?.has(entry.id)) {
      files.set(entry.id, 'unchanged')
      continue
    }
    const read = await store.read(entry)
    if (!read) continue
    etags.set(entry.id, read.etag)
    files.set(entry.id, { text: read.text, format: entry.format })
  }
  for (const id of [...etags.keys()]) if (!files.has(id)) etags.delete(id)
  return files
}

/** The hosts an operator manifest names (its url, base_url): the operator trusts them, private or not. */
function explicitHosts(definition: SourceDefinition): string[] {
  const manifest = definition.manifest as { url?: string; base_url?: string } | undefined
  return [manifest?.url, manifest?.base_url].flatMap((url) => {
    if (!url) return []
    try {
      return [new URL(url).host]
    } catch {
      return []
    }
  })
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref?.())
}
