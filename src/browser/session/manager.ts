import { randomBytes } from 'node:crypto'
import { ToolError } from '../../core/errors'
import { onFirstUse } from '../../core/first-use'
import type { Logger } from '../../core/logger'
import type { SessionRegistry } from './registry'
import { endedError } from './runner'
import type { LiveSession, SessionHost } from './session'
import type { BrowserSessionSettings } from './settings'
import type { BrowserSession, BrowserSessions, SessionSummary } from './types'

export interface SessionManagerOptions {
  /** The shared Chromium and its target guard, launched on first use. */
  host: () => Promise<SessionHost>
  settings: BrowserSessionSettings
  /** Largest download a session keeps (the file size limit). */
  maxDownloadBytes: number
  log: Logger
  /** A fleet's registry (instance liveness, fleet-wide per-tenant counts); unset: this instance alone. */
  registry?: SessionRegistry | undefined
  now?: () => number
}

interface Held {
  tenant: string
  session: LiveSession | undefined
  openedAt: number
  lastUsed: number
  busy: number
}

const idPattern = /^bs-([a-z0-9]{1,16})-([a-z0-9]{24})$/
const tombstonesKept = 1000

function newInstanceId(): string {
  return randomBytes(6).toString('hex')
}

function notFound(id: string): ToolError {
  return new ToolError('not_found', `There is no browser session ${JSON.stringify(id.slice(0, 80))}.`, {
    hint: 'Use the session_id browser_open answered; sessions end with browser_close, when idle, or at their maximum life.',
    details: { field: 'session_id' },
  })
}

/**
 * The sessions of this instance. A session id names the instance that holds it (`bs-<instance>-…`),
 * so a load balancer can route on it, and an instance that receives another's session says which
 * instance holds it instead of pretending it does not exist. Sessions belong to a tenant: another
 * tenant's id answers exactly like an unknown one. Idle and old sessions are closed by a sweep; each
 * ended session leaves a note (why it ended) for a while, so the next call on it gets a clear error.
 * In a fleet, the registry tells a live holder (503 naming it) from a stopped one (404: the session
 * ended with it), and counts each tenant's sessions across every instance.
 */
export function createBrowserSessions(options: SessionManagerOptions): BrowserSessions {
  const { settings, log } = options
  const now = options.now ?? Date.now
  const instanceId = settings.instanceId ?? newInstanceId()
  const held = new Map<string, Held>()
  const ended = new Map<string, { tenant: string; reason: string }>()
  const endListeners: ((tenant: string, seconds: number) => void)[] = []
  let sweeper: ReturnType<typeof setInterval> | undefined
  // The session machinery (tabs, actions, snapshots, downloads) loads with the first session opened:
  // an instance that never opens one, such as a cold start serving a file read, does not compile it.
  const sessionModule = onFirstUse(() => import('./session'))
  const registry = options.registry
  registry?.join(instanceId, () => [...held].map(([id, entry]) => ({ id, tenant: entry.tenant })))

  function tombstone(id: string, tenant: string, reason: string): void {
    ended.set(id, { tenant, reason })
    if (ended.size > tombstonesKept) ended.delete(ended.keys().next().value as string)
  }

  async function end(id: string, reason: string): Promise<void> {
    const entry = held.get(id)
    if (!entry) return
    held.delete(id)
    registry?.release(entry.tenant, id)
    tombstone(id, entry.tenant, reason)
    for (const listener of endListeners) listener(entry.tenant, Math.max(0, now() - entry.openedAt) / 1000)
    if (held.size === 0 && sweeper) {
      clearInterval(sweeper)
      sweeper = undefined
    }
    await entry.session
      ?.dispose()
      .catch((error: unknown) => log.warn('closing a browser session failed', { cause: String(error) }))
  }

  const maxLifeReason = `it reached its maximum life of ${settings.maxLifeMs / 1000} s`

  function pastMaxLife(entry: Held): boolean {
    return now() - entry.openedAt >= settings.maxLifeMs
  }

  /**
   * A session past its maximum life takes no new call (find refuses it); the calls already running
   * finish, bounded by the action deadline, and the last one to settle ends it (or the sweep does).
   */
  function endIfOver(id: string, entry: Held): void {
    if (entry.session && entry.busy === 0 && pastMaxLife(entry)) void end(id, maxLifeReason)
  }

  function sweep(): void {
    const at = now()
    for (const [id, entry] of held) {
      if (!entry.session || entry.busy > 0) continue
      if (pastMaxLife(entry)) void end(id, maxLifeReason)
      else if (at - entry.lastUsed >= settings.idleMs) void end(id, `it was idle for ${settings.idleMs / 1000} s`)
    }
  }

  function retryAfter(entries: Held[]): string {
    const soonest = Math.min(
      ...entries.map((entry) => Math.min(entry.lastUsed + settings.idleMs, entry.openedAt + settings.maxLifeMs)),
    )
    return String(Math.max(1, Math.ceil((soonest - now()) / 1000)))
  }

  function limitReached(message: string, entries: Held[]): ToolError {
    return new ToolError('rate_limited', message, {
      hint: 'Close a session you no longer need with browser_close, or wait for Retry-After seconds.',
      headers: { 'Retry-After': retryAfter(entries) },
    })
  }

  function find(tenant: string, id: string): Held {
    const holder = idPattern.exec(id)?.[1]
    if (holder !== undefined && holder !== instanceId) {
      // A holder the fleet no longer hears from took the session with it: ended, not "held elsewhere".
      if (registry?.alive(holder) === false) throw endedError(id, 'its instance stopped')
      throw new ToolError(
        'unavailable',
        `The browser session ${id} is held by instance ${holder}, not this one (${instanceId}).`,
        {
          hint: 'Send every call of a session to the instance named in its session_id (the load balancer routes on it); or open a new session here.',
          details: { field: 'session_id', instance: holder },
        },
      )
    }
    const entry = held.get(id)
    if (entry?.tenant === tenant && entry.session) {
      if (!pastMaxLife(entry)) return entry
      // However busy: calls keep coming on a session, but none starts past its maximum life.
      endIfOver(id, entry)
      throw endedError(id, maxLifeReason)
    }
    const note = ended.get(id)
    if (note?.tenant === tenant) throw endedError(id, note.reason)
    throw notFound(id)
  }

  /** The session as tools use it: each call marks it busy (no sweep mid-action) and renews its idle time. */
  function tracked(id: string, entry: Held, session: LiveSession): BrowserSession {
    return new Proxy(session, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver)
        if (typeof value !== 'function') return value
        return (...args: unknown[]) => {
          entry.busy++
          entry.lastUsed = now()
          const settle = () => {
            entry.busy--
            entry.lastUsed = now()
            endIfOver(id, entry)
          }
          try {
            const result = value.apply(target, args)
            if (result instanceof Promise) return result.finally(settle)
            settle()
            return result
          } catch (error) {
            settle()
            throw error
          }
        }
      },
    })
  }

  /** Throws unless the tenant may open a session now: sessions off (Lambda), or a limit reached (429). */
  function admits(tenant: string): void {
    if (settings.maxSessions === 0) {
      throw new ToolError('unavailable', 'Browser sessions are turned off on this deployment.', {
        notOffered: true,
        hint: 'They need a long-lived instance (the Node server or its Docker image, with TOOLPORT_BROWSER_SESSIONS above 0); on AWS Lambda a session cannot outlive one invocation. Use screenshot or web_fetch with render for one-shot pages.',
      })
    }
    const all = [...held.values()]
    if (all.length >= settings.maxSessions)
      throw limitReached(`This instance has its ${settings.maxSessions} browser sessions open.`, all)
    const own = all.filter((entry) => entry.tenant === tenant)
    if (own.length >= settings.maxPerTenant)
      throw limitReached(`You have ${settings.maxPerTenant} browser sessions open, the most allowed.`, own)
  }

  /** Counts the new session fleet-wide (a fleet only): 429 past the tenant's cap, 503 without the registry. */
  async function claim(tenant: string, id: string): Promise<void> {
    if (!registry) return
    let admitted: boolean
    try {
      admitted = await registry.claim(tenant, id, settings.maxPerTenant)
    } catch (error) {
      log.warn('browser session registry unreachable', { cause: String(error) })
      throw new ToolError('unavailable', 'The browser session registry (Redis) is unreachable.', {
        hint: 'Sessions need the fleet engine to count them across instances; try again in a few seconds. Tools without sessions still work.',
      })
    }
    if (!admitted) {
      const own = [...held.values()].filter((entry) => entry.tenant === tenant)
      throw new ToolError(
        'rate_limited',
        `You have ${settings.maxPerTenant} browser sessions open across the fleet, the most allowed.`,
        {
          hint: 'Close a session you no longer need with browser_close, or wait for Retry-After seconds.',
          headers: { 'Retry-After': own.length > 0 ? retryAfter(own) : String(Math.ceil(settings.idleMs / 1000)) },
        },
      )
    }
  }

  function summaryOf(id: string, entry: Held): SessionSummary {
    return {
      session_id: id,
      opened_at: new Date(entry.openedAt).toISOString(),
      expires_at: new Date(entry.openedAt + settings.maxLifeMs).toISOString(),
      idle_expires_at: new Date(entry.lastUsed + settings.idleMs).toISOString(),
    }
  }

  return {
    instanceId,
    evaluateAllowed: settings.allowEvaluate,
    get open_count() {
      return held.size
    },
    admits,
    async open(tenant, openOptions) {
      admits(tenant)
      const id = `bs-${instanceId}-${randomBytes(12).toString('hex')}`
      const entry: Held = { tenant, session: undefined, openedAt: now(), lastUsed: now(), busy: 1 }
      held.set(id, entry)
      try {
        await claim(tenant, id)
        const host = await options.host()
        const limits = {
          maxPages: settings.maxPages,
          actionMs: settings.actionMs,
          maxDownloadBytes: options.maxDownloadBytes,
        }
        const { openSession } = await sessionModule()
        const session = await openSession(id, host, openOptions, limits, (reason) => void end(id, reason))
        if (!held.has(id)) {
          await session.dispose()
          throw endedError(id, ended.get(id)?.reason ?? 'it was closed while opening')
        }
        entry.session = session
      } catch (error) {
        held.delete(id)
        registry?.release(tenant, id)
        throw error
      } finally {
        entry.busy--
      }
      sweeper ??= setInterval(sweep, Math.min(5_000, Math.max(250, Math.min(settings.idleMs, settings.maxLifeMs) / 4)))
      sweeper.unref?.()
      return { session: tracked(id, entry, entry.session), summary: summaryOf(id, entry) }
    },
    get(tenant, id) {
      const entry = find(tenant, id)
      entry.lastUsed = now()
      return tracked(id, entry, entry.session as LiveSession)
    },
    summary(tenant, id) {
      return summaryOf(id, find(tenant, id))
    },
    async close(tenant, id) {
      find(tenant, id)
      await end(id, 'it was closed with browser_close')
    },
    onEnded(listener) {
      endListeners.push(listener)
    },
    async closeAll() {
      await Promise.all([...held.keys()].map((id) => end(id, 'the service shut down')))
      registry?.leave()
    },
  }
}
