import type { CatalogEntry } from '../../catalog/entry'
import type { Logger } from '../../core/logger'
import { kindFor } from '../kinds/all-kinds'
import type { SourceDefinition } from '../manifest'
import type { LoadedSource, SourceLoadContext, SourceOwner, SourceState, SourceStatus } from '../types'

/** How long a source may take to load (connect, list, fetch a document) before it is in error. */
export const loadTimeoutMs = 20_000
/** A source in error is tried again no sooner than this. */
export const retryAfterMs = 30_000

/** One source as this instance holds it: its manifest, its state, and once ready its tools. */
export interface HostedSource {
  readonly owner: SourceOwner
  readonly id: string
  readonly kind: string
  readonly revision: string
  /** Whether its tools come from an upstream (an MCP server, an OpenAPI document at a URL) when it loads. */
  readonly upstream: boolean
  readonly state: SourceState
  readonly reason: string | undefined
  readonly tools: readonly CatalogEntry[]
  readonly overrides: ReadonlyMap<string, CatalogEntry>
  /** Names its tools had when it was last ready: a call to one while it is not gets a hint naming the source. */
  readonly knownNames: readonly string[]
  readonly refreshedAt: Date | undefined
  /** When it entered its state. */
  readonly since: Date
  /** Loads (again); resolves when done, whatever the outcome. */
  load(): Promise<void>
  /** Settles when a load in progress does. */
  settled(): Promise<void>
  /** Whether an error is old enough to try again, or a ready source's upstream listing old enough to refresh. */
  retryDue(now: number, refreshMs: number): boolean
  close(): Promise<void>
  status(): SourceStatus
}

export interface HostedSourceOptions {
  owner: SourceOwner
  id: string
  /** The checked manifest, or why the stored one could not be read (the source is then in error). */
  definition: SourceDefinition | { error: string; kind?: string; revision: string }
  context: (signal: AbortSignal) => SourceLoadContext
  /** Names the source's tools had under the manifest this one replaces, for 404 hints until it loads. */
  knownNames?: readonly string[]
  log: Logger
  /** Called on every change of state or tools, and when the source itself says its tools changed. */
  changed(source: HostedSource, reloadWanted: boolean): void
}

export function createHostedSource(options: HostedSourceOptions): HostedSource {
  const { definition } = options
  const broken = 'error' in definition
  const disabled = !broken && !definition.enabled
  let state: SourceState = broken ? 'error' : disabled ? 'disabled' : 'loading'
  let since = new Date()
  let reason: string | undefined = broken ? definition.error : undefined
  let loaded: LoadedSource | undefined
  // The loaded tools, marked as a tenant's own when a tenant registered the source.
  let loadedTools: readonly CatalogEntry[] = []
  // Before its first load, the names its manifest declares (or those of the manifest it replaces).
  let knownNames: string[] = [...(options.knownNames ?? (broken ? [] : declaredNames(definition.manifest)))]
  let refreshedAt: Date | undefined = broken || disabled ? new Date() : undefined
  let loading: Promise<void> | undefined
  let closed = false

  async function loadOnce(): Promise<void> {
    if (broken || disabled || closed) return
    const manifest = definition.manifest
    const controller = new AbortController()
    let timer: ReturnType<typeof setTimeout> | undefined
    let timedOut = false
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        timedOut = true
        controller.abort(new Error('load timed out'))
        reject(new Error(`it did not load within ${loadTimeoutMs / 1000} s (no answer from its upstream)`))
      }, loadTimeoutMs)
    })
    // A ready source keeps serving its tools while it refreshes.
    if (state !== 'ready') {
      enter('loading')
      options.changed(source, false)
    }
    try {
      const running = kindFor(manifest.kind).then((kind) =>
        kind.load(manifest as never, options.context(controller.signal)),
      )
      // A load that finishes after the timeout still holds connections: close them.
      running.then((late) => (timedOut ? late.close?.() : undefined)).catch(() => {})
      const next = await Promise.race([running, expired])
      if (closed) {
        await next.close?.()
        return
      }
      const previous = loaded
      loaded = next
      loadedTools =
        options.owner.kind === 'tenant' ? next.tools.map((entry) => ({ ...entry, tenantSource: true })) : next.tools
      await previous?.close?.().catch(() => {})
      knownNames = [...next.tools.map((tool) => tool.name), ...(next.overrides?.keys() ?? [])]
      enter('ready')
      reason = next.notes?.join('; ')
      next.onChange?.(() => {
        if (loaded === next && !closed) options.changed(source, true)
      })
      next.onNote?.(() => {
        if (loaded === next && !closed) options.changed(source, false)
      })
    } catch (error) {
      enter('error')
      reason = describe(error)
      options.log.warn('source failed to load', {
        source: options.id,
        owner: ownerName(options.owner),
        reason,
      })
    } finally {
      clearTimeout(timer)
      refreshedAt = new Date()
      options.changed(source, false)
    }
  }

  function enter(next: SourceState): void {
    if (state !== next) since = new Date()
    state = next
  }

  const source: HostedSource = {
    owner: options.owner,
    id: options.id,
    kind: broken ? (definition.kind ?? 'unknown') : definition.manifest.kind,
    revision: definition.revision,
    upstream: !broken && listsUpstream(definition.manifest),
    get state() {
      return state
    },
    get reason() {
      return reason
    },
    get tools() {
      return state === 'ready' ? loadedTools : []
    },
    get overrides() {
      return state === 'ready' ? (loaded?.overrides ?? new Map()) : new Map()
    },
    get knownNames() {
      return knownNames
    },
    get refreshedAt() {
      return refreshedAt
    },
    get since() {
      return since
    },
    load() {
      loading ??= loadOnce().finally(() => {
        loading = undefined
      })
      return loading
    },
    settled: () => loading ?? Promise.resolve(),
    retryDue(now, refreshMs) {
      if (broken || disabled || loading) return false
      const age = now - (refreshedAt?.getTime() ?? 0)
      if (state === 'error') return age >= retryAfterMs
      // Sources whose tools come from an upstream (an MCP server, an OpenAPI document at a URL) are listed again.
      return state === 'ready' && listsUpstream(definition.manifest) && age >= refreshMs
    },
    async close() {
      closed = true
      const current = loaded
      loaded = undefined
      await current?.close?.().catch(() => {})
    },
    status: () => {
      // A ready source may know more now than when it loaded (its worker stopped, and why).
      const live = state === 'ready' ? loaded?.note?.() : undefined
      const why = [reason, live].filter(Boolean).join('; ')
      return {
        id: options.id,
        kind: source.kind,
        owner: options.owner.kind,
        status: state,
        enabled: !disabled,
        supports_ai: state === 'ready' ? loadedTools.length > 0 : knownNames.length > 0,
        since: since.toISOString(),
        ...(why ? { reason: why } : disabled ? { reason: 'it is disabled ("enabled": false)' } : {}),
        tools: state === 'ready' ? knownNames : [],
        refreshed_at: refreshedAt?.toISOString() ?? null,
        revision: definition.revision,
      }
    },
  }
  return source
}

/** The tool names a manifest declares itself (every kind but mcp and openapi, whose upstream names them). */
function declaredNames(manifest: SourceDefinition['manifest']): string[] {
  const tools = (manifest as { tools?: unknown }).tools
  if (!Array.isArray(tools)) return []
  return tools.flatMap((tool) =>
    typeof (tool as { name?: unknown })?.name === 'string' ? [(tool as { name: string }).name] : [],
  )
}

function listsUpstream(manifest: SourceDefinition['manifest']): boolean {
  return manifest.kind === 'mcp' || (manifest.kind === 'openapi' && manifest.url !== undefined)
}

export function ownerName(owner: SourceOwner): string {
  return owner.kind === 'operator' ? 'operator' : `tenant ${owner.tenant}`
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return message.replace(/\s+/g, ' ').slice(0, 500)
}
