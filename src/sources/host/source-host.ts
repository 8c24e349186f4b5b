import { ToolError } from '../../core/errors'
import type { Logger } from '../../core/logger'
import type { HttpClient } from '../../net/http'
import { sourceKeys } from '../../storage/layout'
import { isPreconditionFailed, type ObjectStore } from '../../storage/store'
import type { Tool } from '../../tools/tool'
import { sourceIdFromName } from '../declared'
import { parseManifest, type SourceDefinition, type TenantSourceKind } from '../manifest'
import type { ManifestDefaults } from '../reference-shape'
import type { ProcessStarter, SourceLoadContext, SourceOwner, SourceStatus } from '../types'
import { assembleTenant, clashOf, type TenantSources } from './assemble'
import { createSourceBudget } from './budget'
import { type HostedSource, loadTimeoutMs } from './hosted-source'
import { createSourceStore, type SourceStore } from './manifest-store'
import { checkOutboundUrls } from './outbound-urls'
import { createPolledSet, type PolledSet } from './polled-set'
import { createSourceSet, type ManifestFile, type SourceSet } from './source-set'

export type { TenantSources }

/** A manifest file as a feed hands it over (a file of the operator's folder, a pack). */
export interface FeedFile {
  /** The file name (or a plugin's folder name); its stem gives the source id (sourceIdFromName). */
  name: string
  text: string
  format: 'json' | 'yaml'
  /** What the file's place supplies: a plugin folder's worker. */
  defaults?: ManifestDefaults
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
  /** Tools of one tenant's sources together (TOOLPORT_TENANT_SOURCE_TOOLS_MAX). */
  maxTenantSourceTools: number
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
  now?: () => number
  /** Tells the other instances that a tenant's sources changed here (a fleet engine publishes it). */
  announce?: (tenant: string) => void
  /** How long calls wait, at most, for a source's first load (10 s); tests lengthen it. */
  loadWaitMs?: number
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
  forTenant(tenant: string | undefined, use?: { forCall: boolean }): Promise<TenantSources>
  /** The operator's sources, then the tenant's, with their status. */
  statuses(tenant: string): Promise<SourceStatus[]>
  put(tenant: string, id: string, json: unknown): Promise<{ status: SourceStatus; created: boolean }>
  remove(tenant: string, id: string): Promise<boolean>
  /**
   * Turns one of the tenant's sources on or off, keeping it registered (its manifest's `enabled`):
   * undefined when the tenant has no such source.
   */
  setEnabled(tenant: string, id: string, enabled: boolean): Promise<SourceStatus | undefined>
  /**
   * Another instance changed the tenant's sources (undefined: the operator's in storage): the next call
   * of that tenant reads them again, instead of waiting for the poll.
   */
  changedElsewhere(tenant: string | undefined): void
  /** Replaces what one operator feed declares (the runtime's folder watcher calls this). */
  setFeed(feed: string, files: readonly FeedFile[]): Promise<void>
  close(): Promise<void>
}

interface TenantState {
  polled: PolledSet
  store: SourceStore
}

// A tenant's first calls after a restart (or a manifest change) wait this long at most for its sources to load.
const defaultLoadWaitMs = 10_000
// Operator feeds in catalog order: compat packs, the watched folder, the bucket's prefix.
const operatorFeedOrder = ['compat', 'folder', 'storage']

export function createSourceHost(deps: SourceHostDeps): SourceHost {
  const now = deps.now ?? Date.now
  const loadWaitMs = deps.loadWaitMs ?? defaultLoadWaitMs
  // When calls first found a source on its first load: they wait for it until loadWaitMs after that.
  const firstSeenLoading = new WeakMap<HostedSource, number>()
  let version = 1
  const builtinNames = new Map(deps.builtins.map((tool) => [tool.name, tool]))
  const overridesAt = { version: 0, value: false }
  const pendingFeeds = new Set<Promise<void>>()
  const assembled = new Map<string, { version: number; sources: TenantSources }>()
  const budget = createSourceBudget(deps.storage, {
    maxSources: deps.maxTenantSources,
    maxTools: deps.maxTenantSourceTools,
  })

  const changed = (source: HostedSource, reloadWanted: boolean) => {
    version++
    if (reloadWanted) void source.load()
  }

  function contextFor(owner: SourceOwner) {
    return (definition: SourceDefinition) =>
      (signal: AbortSignal): SourceLoadContext => ({
        owner,
        http: owner.kind === 'operator' && deps.httpAllowing ? deps.httpAllowing(explicitHosts(definition)) : deps.http,
        secret: (name) => (owner.kind === 'operator' ? deps.environment[name] : deps.tenantSecrets(owner.tenant)[name]),
        log: deps.log,
        signal,
        builtins: builtinNames,
        processes: deps.processes,
        keepWarm: deps.keepWarm,
      })
  }

  const setOf = (owner: SourceOwner) =>
    createSourceSet({ owner, tenantKinds: deps.tenantKinds, context: contextFor(owner), log: deps.log, changed })
  const operator: SourceOwner = { kind: 'operator' }
  const feeds = new Map<string, SourceSet>(operatorFeedOrder.map((feed) => [feed, setOf(operator)]))
  const operatorStorage = createPolledSet(
    createSourceStore(deps.storage, sourceKeys.operator),
    feeds.get('storage') as SourceSet,
    { refreshMs: deps.refreshMs, now },
  )
  const tenants = new Map<string, TenantState>()

  function tenantState(tenant: string): TenantState {
    let state = tenants.get(tenant)
    if (!state) {
      const store = createSourceStore(deps.storage, sourceKeys.tenant(tenant))
      state = {
        store,
        polled: createPolledSet(store, setOf({ kind: 'tenant', tenant }), { refreshMs: deps.refreshMs, now }),
      }
      tenants.set(tenant, state)
    }
    return state
  }

  async function refreshed(polled: PolledSet): Promise<void> {
    if (await polled.refresh()) version++
  }

  function operatorEntries(): HostedSource[] {
    return operatorFeedOrder.flatMap((feed) => feeds.get(feed)?.ordered() ?? [])
  }

  async function prepare(tenant: string | undefined, forCall: boolean): Promise<HostedSource[]> {
    if (pendingFeeds.size > 0) await Promise.all(pendingFeeds)
    // The bucket's operator sources: a storage that does not answer must not break the built-ins.
    await refreshed(operatorStorage).catch((error: unknown) =>
      deps.log.warn('operator sources in storage could not be read', { cause: String(error) }),
    )
    const state = tenant === undefined ? undefined : tenantState(tenant)
    if (state) await refreshed(state.polled)
    const all = [...operatorEntries(), ...(state?.polled.set.ordered() ?? [])]
    const time = now()
    for (const source of all) if (source.retryDue(time, deps.upstreamRefreshMs)) void source.load()
    // A listing waits for what loads without an upstream (a declared manifest, compiled here), never on
    // an upstream that may hang: such a source is listed as loading meanwhile.
    await firstLoads(forCall ? all : all.filter((source) => !source.upstream), time)
    return all
  }

  /**
   * Waits for sources on their first load (after a restart, or a new manifest), so that a tenant's first
   * call finds their tools; the wait ends loadWaitMs after calls first found each one loading, for all
   * calls together. A source loading again (a retry after an error, a refresh) is not waited for: its
   * upstream may hang for the whole load timeout, every retry, and the tenant's other tools would wait
   * with it.
   */
  async function firstLoads(all: readonly HostedSource[], time: number): Promise<void> {
    const waits: Promise<void>[] = []
    for (const source of all) {
      if (source.state !== 'loading' || source.refreshedAt !== undefined) continue
      const since = firstSeenLoading.get(source) ?? time
      firstSeenLoading.set(source, since)
      const left = since + loadWaitMs - time
      if (left > 0) waits.push(Promise.race([source.settled(), delay(left)]))
    }
    if (waits.length > 0) await Promise.all(waits)
  }

  /** The tenant's sources assembled with the operator's, once per version of the sources. */
  async function forTenant(tenant: string | undefined, use = { forCall: false }): Promise<TenantSources> {
    const sources = await prepare(tenant, use.forCall)
    const key = tenant ?? ''
    const cached = assembled.get(key)
    if (cached && cached.version === version) return cached.sources
    const removed = [
      ...operatorFeedOrder.flatMap((feed) => [...(feeds.get(feed)?.removed ?? [])]),
      ...(tenant === undefined ? [] : [...(tenants.get(tenant)?.polled.set.removed ?? [])]),
    ]
    const result = assembleTenant(sources, builtinNames, removed)
    assembled.set(key, { version, sources: result })
    return result
  }

  return {
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
    forTenant,
    async statuses(tenant) {
      return (await forTenant(tenant)).statuses
    },
    async put(tenant, id, json) {
      // The id in the URL is the manifest's when it names none (a reference plugin manifest has none).
      const definition = parseManifest(
        json,
        { kind: 'tenant', tenant },
        { tenantKinds: deps.tenantKinds, defaults: { id } },
      )
      if (definition.manifest.id !== id) {
        throw new ToolError('validation', `The manifest's id is ${definition.manifest.id}, but the URL names ${id}.`, {
          hint: `PUT the manifest to /v1/sources/${definition.manifest.id}, or change its id to ${id}.`,
          details: { field: 'id' },
        })
      }
      if (deps.http) await checkOutboundUrls(definition.manifest, deps.http)
      const state = tenantState(tenant)
      await refreshed(state.polled)
      const { set } = state.polled
      const existed = set.entries.has(id)
      if (!existed && set.entries.size >= deps.maxTenantSources) {
        throw new ToolError('size_exceeded', `This tenant has ${set.entries.size} sources, the most allowed.`, {
          hint: 'Remove a source (DELETE /v1/sources/{id}) before adding another.',
        })
      }
      // Loaded before it is stored: a source whose tools would take names already taken is refused with
      // 409 naming both, rather than stored to break the source that had them (or a built-in) later.
      const next = set.candidate(id, definition)
      await Promise.race([next.load(), delay(loadTimeoutMs + 1_000)])
      const tenantOthers = set.ordered().filter((source) => source.id !== id)
      const others = [...operatorEntries(), ...tenantOthers]
      const clash = next.state === 'ready' ? clashOf(next, others, builtinNames) : undefined
      if (clash) {
        await next.close()
        throw new ToolError('conflict', `The source ${id} was not registered: ${clash}.`, {
          hint: 'Rename the tool (or the tools of one of the sources), or remove the other source first.',
          details: { field: 'tools' },
        })
      }
      // A budget of sources and tools per tenant, counted once loaded (an MCP server or an OpenAPI
      // document names its own: 38 sources of 1,000 wide tools exhausted the heap), reserved by
      // compare-and-swap before the manifest is stored, so concurrent PUTs cannot pass it together.
      const stored = new Map(tenantOthers.map((source) => [source.id, source.tools.length]))
      let unreserve: (() => Promise<void>) | undefined
      try {
        unreserve = await budget.reserve(tenant, id, next.tools.length, stored)
      } catch (error) {
        await next.close()
        throw error
      }
      // Over the version this instance loaded (or only if there is none): a PUT or DELETE that another
      // instance landed meanwhile is not overwritten, this one is refused instead.
      const known = existed ? state.polled.etagOf(id) : null
      let etag: string
      try {
        etag = await state.store.write(id, JSON.stringify(json), known ?? null)
      } catch (error) {
        await next.close()
        await unreserve().catch(() => {})
        if (isPreconditionFailed(error)) throw sourceChanged(id)
        throw error
      }
      state.polled.remember(id, etag)
      set.adopt(next)
      version++
      deps.announce?.(tenant)
      const status = assembleTenant([...operatorEntries(), ...set.ordered()], builtinNames).statuses.find(
        (entry) => entry.owner === 'tenant' && entry.id === id,
      )
      return { status: status ?? next.status(), created: !existed }
    },
    async setEnabled(tenant, id, enabled) {
      const state = tenantState(tenant)
      // The manifest as this instance last read it (the etag its PUT replaces), read again if stale.
      for (let attempt = 0; attempt < 3; attempt++) {
        await refreshed(state.polled)
        const known = state.polled.etagOf(id)
        if (!state.polled.set.entries.has(id) || known === undefined) return undefined
        const stored = await state.store.read({ id, etag: known, format: 'json' })
        if (!stored) return undefined
        if (stored.etag !== known) {
          state.polled.expire()
          continue
        }
        const json = JSON.parse(stored.text) as Record<string, unknown>
        if ((json.enabled ?? true) === enabled) {
          const statuses = (await forTenant(tenant)).statuses
          return statuses.find((status) => status.owner === 'tenant' && status.id === id)
        }
        // Stored and loaded like any other change of the manifest (checks, budget, compare-and-swap).
        return (await this.put(tenant, id, { ...json, enabled })).status
      }
      throw sourceChanged(id)
    },
    async remove(tenant, id) {
      const state = tenantState(tenant)
      await refreshed(state.polled)
      if (!state.polled.set.entries.has(id)) return false
      try {
        await state.store.remove(id, state.polled.etagOf(id))
      } catch (error) {
        if (isPreconditionFailed(error)) throw sourceChanged(id)
        throw error
      }
      await budget.release(tenant, id).catch((error: unknown) => {
        // Left, the reservation stops counting once it is older than a PUT in flight can be.
        deps.log.warn('a removed source kept its budget reservation', {
          tenant,
          source: id,
          error: error instanceof Error ? error.message : String(error),
        })
      })
      const removed = state.polled.set.remove(id)
      state.polled.forget(id)
      version++
      deps.announce?.(tenant)
      await removed?.close()
      return true
    },
    changedElsewhere(tenant) {
      if (tenant === undefined) operatorStorage.expire()
      else tenants.get(tenant)?.polled.expire()
    },
    async setFeed(feed, files) {
      const byId = new Map<string, ManifestFile>()
      for (const file of files) {
        const stem = /^(.+)\.(json|ya?ml)$/.exec(file.name)?.[1] ?? file.name
        byId.set(sourceIdFromName(stem), {
          text: file.text,
          format: file.format,
          ...(file.defaults ? { defaults: file.defaults } : {}),
        })
      }
      const set = feeds.get(feed)
      if (!set) throw new Error(`unknown source feed ${feed}`)
      const applying = set.reconcile(byId).then((any) => {
        if (any) version++
      })
      pendingFeeds.add(applying)
      try {
        await applying
      } finally {
        pendingFeeds.delete(applying)
      }
    },
    async close() {
      const sets = [...feeds.values(), ...[...tenants.values()].map((state) => state.polled.set)]
      tenants.clear()
      await Promise.all(sets.map((set) => set.close()))
    },
  }
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

function sourceChanged(id: string): ToolError {
  return new ToolError(
    'conflict',
    `The source ${id} was changed by another request while this one was being applied.`,
    {
      hint: 'GET /v1/sources to see it as it is now, then repeat the request if it is still wanted.',
      details: { field: 'id' },
    },
  )
}
