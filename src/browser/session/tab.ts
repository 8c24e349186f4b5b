import type { CDPSession, HTTPRequest, Page } from 'puppeteer-core'
import type { ConsoleMessage, DialogReport } from './types'

/** One page of a session, with what the session needs to know of it as it happens. */
export interface Tab {
  page: Page
  /** A CDP session of our own for the accessibility tree, DOM and input by node id. */
  cdp: CDPSession
  /**
   * Resolves once what an action begun at `since` started has settled: at once when it started
   * nothing, else when no request has been in flight and no main-frame load pending for 100 ms, or
   * after capMs (a page that polls forever).
   */
  quiet(since: number, capMs: number): Promise<void>
  crashed: boolean
}

export interface TabEvents {
  dialogs: 'dismiss' | 'accept'
  onDialog(report: DialogReport): void
  onConsole(message: ConsoleMessage): void
  onCrash(tab: Tab): void
}

const quietMs = 100

export async function openTab(page: Page, events: TabEvents): Promise<Tab> {
  const cdp = await page.createCDPSession()
  await cdp.send('Page.enable')
  const mainFrame = (await cdp.send('Page.getFrameTree')).frameTree.frame.id
  let inflight = 0
  let loading = false
  let changed = Date.now()
  const mark = () => {
    changed = Date.now()
  }
  const started = (request: HTTPRequest) => {
    inflight++
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) loading = true
    mark()
  }
  const ended = (request: HTTPRequest) => {
    inflight = Math.max(0, inflight - 1)
    if (request.isNavigationRequest() && request.frame() === page.mainFrame() && request.failure()) loading = false
    mark()
  }
  // A navigation is known from the moment the page asks for it (a form submitted, a link followed),
  // before its request exists.
  const startsLoading = (event: { frameId: string }) => {
    if (event.frameId !== mainFrame) return
    loading = true
    mark()
  }
  cdp.on('Page.frameRequestedNavigation', startsLoading)
  cdp.on('Page.frameStartedLoading', startsLoading)
  cdp.on('Page.frameStoppedLoading', (event: { frameId: string }) => {
    if (event.frameId !== mainFrame) return
    loading = false
    mark()
  })
  page.on('request', started)
  page.on('requestfinished', ended)
  page.on('requestfailed', ended)
  page.on('load', () => {
    loading = false
    mark()
  })
  page.on('console', (message) => {
    const location = message.location()
    events.onConsole({ type: message.type(), text: message.text(), ...(location.url ? { url: location.url } : {}) })
  })
  page.on('pageerror', (error) => {
    events.onConsole({ type: 'pageerror', text: error instanceof Error ? error.message : String(error) })
  })
  page.on('dialog', (dialog) => {
    // beforeunload is not the page asking the user a question (as confirm is): it would veto a
    // navigation the caller asked for, and every later one, so the page is always let go.
    const action = events.dialogs === 'accept' || dialog.type() === 'beforeunload' ? 'accepted' : 'dismissed'
    events.onDialog({ type: dialog.type(), message: dialog.message().slice(0, 500), action })
    void (action === 'accepted' ? dialog.accept() : dialog.dismiss()).catch(() => {})
  })
  const tab: Tab = {
    page,
    cdp,
    crashed: false,
    async quiet(since, capMs) {
      const until = Date.now() + capMs
      // What the action started runs in the page's next tasks (a form submits, a handler fetches): a
      // round trip through the page's task queue lets it ask, and its events arrive before the answer.
      await Promise.race([
        cdp.send('Runtime.evaluate', { expression: 'new Promise((r) => setTimeout(r, 0))', awaitPromise: true }),
        new Promise((resolve) => setTimeout(resolve, 250)),
      ]).catch(() => {})
      while (Date.now() < until) {
        if (tab.crashed || page.isClosed()) return
        const idle = inflight === 0 && !loading
        if (idle && changed < since) return
        if (idle && Date.now() - changed >= quietMs) return
        await new Promise((resolve) => setTimeout(resolve, idle ? quietMs - (Date.now() - changed) : 25))
      }
    },
  }
  page.on('error', () => {
    tab.crashed = true
    events.onCrash(tab)
  })
  return tab
}
