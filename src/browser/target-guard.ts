import type { Browser, BrowserContext, CDPSession } from 'puppeteer-core'
import type { Logger } from '../core/logger'

/** A request a guarded context was not allowed to make, or a window it was not allowed to open. */
export interface BlockedRequest {
  url: string
  /** One sentence: why it was refused. */
  reason: string
  /** What asked for it: a CDP resource type ("Document", "XHR", "Image", …), or "Popup". */
  kind: string
}

export interface ContextPolicy {
  /** Throws for an http(s) URL the context may not load (the outbound address check). */
  check(url: string): Promise<void>
  /**
   * `close`: a window a page opens is closed before it runs (one-shot renders, where nothing may open
   * a window); `allow`: popups and new tabs live on, under the same checks (sessions).
   */
  popups: 'allow' | 'close'
  onBlocked?(blocked: BlockedRequest): void
  /** A page of the context opened a window that was let live (before puppeteer reports it). */
  onPopup?(): void
}

export interface TargetGuard {
  /** Puts a context under the policy; call before its first page. Returns the release. */
  protect(context: BrowserContext, policy: ContextPolicy): () => void
}

interface TargetInfo {
  targetId: string
  type: string
  url: string
  browserContextId?: string
  /** Set on a window another page opened (window.open, a link or form with a target, noopener or not). */
  openerId?: string
  openerFrameId?: string
}

interface AttachedEvent {
  sessionId: string
  targetInfo: TargetInfo
}

interface PausedRequest {
  requestId: string
  request: { url: string }
  resourceType?: string
}

/** A context toolport does not know reaches nothing. */
const denyAll: ContextPolicy = {
  check: () => Promise.reject(new Error('the page belongs to no guarded browser context')),
  popups: 'close',
}

const passThrough = /^(data:|blob:|about:)/i

function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return message.replace(/\.$/, '')
}

/**
 * Every target of every browser context — the first page, popups and new tabs (window.open, links
 * and forms with a target), frames in their own process, dedicated, shared and service workers — is
 * attached through CDP before it runs (auto-attach with waitForDebuggerOnStart, flattened, on the
 * browser and again on each target for its children) and gets Fetch interception, so each request it
 * makes passes its context's policy before Chromium sends it; other schemes (file:, chrome:, ftp:, …)
 * are refused. Puppeteer attaches too, on its own sessions: a target resumes once both have let it go.
 * Connections that Fetch cannot see (WebSockets, WebTransport, WebRTC, preconnects) are held by the
 * egress proxy, which every socket of the browser goes through.
 */
export async function createTargetGuard(browser: Browser, log: Logger): Promise<TargetGuard> {
  const policies = new Map<string, ContextPolicy>()

  const root = await browser.target().createCDPSession()
  /** Sessions of windows being closed: none of their requests leaves. */
  const refuseAll = new Set<string>()
  const closing: ContextPolicy = {
    check: () => Promise.reject(new Error('the window is being closed')),
    popups: 'close',
  }

  function policyOf(info: TargetInfo): ContextPolicy {
    return (info.browserContextId && policies.get(info.browserContextId)) || denyAll
  }

  async function decide(url: string, policy: ContextPolicy): Promise<string | undefined> {
    if (passThrough.test(url)) return undefined
    if (!/^https?:/i.test(url)) return `${url.split(':')[0]}: URLs are not loaded`
    try {
      await policy.check(url)
      return undefined
    } catch (error) {
      return reasonOf(error)
    }
  }

  function intercept(session: CDPSession, info: TargetInfo): void {
    session.on('Fetch.requestPaused', (event: PausedRequest) => {
      const policy = refuseAll.has(session.id()) ? closing : policyOf(info)
      void decide(event.request.url, policy)
        .then((reason) => {
          if (reason === undefined) return session.send('Fetch.continueRequest', { requestId: event.requestId })
          policy.onBlocked?.({ url: event.request.url, reason, kind: event.resourceType ?? 'Other' })
          return session.send('Fetch.failRequest', { requestId: event.requestId, errorReason: 'BlockedByClient' })
        })
        .catch(() => {
          // The target went away with the request paused: nothing left to answer.
        })
    })
  }

  async function attached(parent: CDPSession, event: AttachedEvent): Promise<void> {
    const info = event.targetInfo
    const session = parent.connection()?.session(event.sessionId)
    if (!session) return
    const policy = policyOf(info)
    const opened = info.openerId !== undefined || info.openerFrameId !== undefined
    // A popup shares its opener's renderer, which stays paused while the popup waits: it is let run
    // with every request refused, and closed at once.
    const unwanted = info.type === 'page' && opened && policy.popups === 'close'
    if (unwanted) {
      policy.onBlocked?.({ url: info.url || 'about:blank', reason: 'this page may not open windows', kind: 'Popup' })
      refuseAll.add(event.sessionId)
    } else if (info.type === 'page' && opened) policy.onPopup?.()
    const steps: Array<Promise<unknown>> = []
    if (['page', 'iframe', 'service_worker', 'shared_worker'].includes(info.type)) {
      intercept(session, info)
      steps.push(session.send('Fetch.enable', { patterns: [{ urlPattern: '*', requestStage: 'Request' }] }))
    }
    // WebSockets never reach Fetch: the egress proxy refuses them; this reports those it sees refused
    // (best effort: one a script opens before the target is attached is refused but not reported).
    if (policy.onBlocked && ['page', 'iframe', 'worker', 'service_worker', 'shared_worker'].includes(info.type)) {
      session.on('Network.webSocketCreated', (socket: { url: string }) => {
        const asHttp = socket.url.replace(/^ws(s?):/i, 'http$1:')
        void decide(asHttp, policyOf(info)).then((reason) => {
          if (reason !== undefined) policyOf(info).onBlocked?.({ url: socket.url, reason, kind: 'WebSocket' })
        })
      })
      // Not awaited: a paused renderer answers Network.enable only once it runs.
      void session.send('Network.enable').catch(() => {})
    }
    // Frames in their own process and workers started by this target are attached the same way.
    if (info.type !== 'service_worker') {
      session.on('Target.attachedToTarget', (child: AttachedEvent) => void attached(session, child))
      steps.push(
        session.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: true, flatten: true }),
      )
    }
    try {
      await Promise.all(steps)
    } catch (error) {
      // A target that cannot be guarded is not let run; one that is already gone needs nothing.
      if (!/closed|detached|not found/i.test(reasonOf(error)))
        log.warn('browser target could not be guarded; closing it', { type: info.type, cause: reasonOf(error) })
      await root.send('Target.closeTarget', { targetId: info.targetId }).catch(() => {})
      return
    }
    await session.send('Runtime.runIfWaitingForDebugger').catch(() => {})
    if (unwanted) {
      await root.send('Target.closeTarget', { targetId: info.targetId }).catch(() => {})
      refuseAll.delete(event.sessionId)
    }
  }

  root.on('Target.attachedToTarget', (event: AttachedEvent) => void attached(root, event))
  // Pages attach directly (not through their tab) so each waits for us before its first request.
  await root.send('Target.setAutoAttach', {
    autoAttach: true,
    waitForDebuggerOnStart: true,
    flatten: true,
    filter: [{ type: 'tab', exclude: true }, { type: 'browser', exclude: true }, {}],
  })

  return {
    protect(context, policy) {
      const id = context.id
      if (!id) throw new Error('the default browser context cannot be guarded; create one')
      policies.set(id, policy)
      return () => {
        policies.delete(id)
      }
    },
  }
}
