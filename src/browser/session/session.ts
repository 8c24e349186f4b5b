import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, BrowserContext, Page } from 'puppeteer-core'
import { ToolError } from '../../core/errors'
import type { BlockedRequest, TargetGuard } from '../target-guard'
import { createActions } from './actions'
import { createDownloads } from './downloads'
import { endedError } from './runner'
import { openTab, type Tab } from './tab'
import type { BrowserSession, ConsoleMessage, DialogReport, SessionLimits, SessionOpenOptions } from './types'

export interface SessionHost {
  browser: Browser
  guard: TargetGuard
}

/** A live session as the manager holds it: the tools' face, and what only the manager may do. */
export interface LiveSession extends BrowserSession {
  /** Set once the session ended by itself (a crashed page, a browser gone): why. */
  readonly ended: string | undefined
  dispose(): Promise<void>
}

const consoleKept = 200

/**
 * One browser session: an isolated browser context of the shared Chromium under the target guard
 * (every request of every tab, popup, frame and worker checked; refusals reported), with its tabs,
 * dialogs handled by rule, console messages kept, downloads in a folder of its own. Actions run one
 * at a time; each has a deadline.
 */
export async function openSession(
  id: string,
  host: SessionHost,
  options: SessionOpenOptions,
  limits: SessionLimits,
  onEnded: (reason: string) => void,
): Promise<LiveSession> {
  const context: BrowserContext = await host.browser.createBrowserContext()
  const folder = await mkdtemp(join(tmpdir(), 'toolport-session-'))
  const blocked: BlockedRequest[] = []
  const dialogs: DialogReport[] = []
  const consoleMessages: ConsoleMessage[] = []
  const tabs: Tab[] = []
  const adopting = new Map<Page, Promise<Tab | undefined>>()
  let current = 0
  // Windows the page opened (told by the guard at once) and those taken in as tabs since.
  let popupsOpened = 0
  let popupsTaken = 0
  // Tabs being set up: they count against the limit from the moment they are let in, so a burst of
  // windows opened at once cannot all pass the check while each awaits its setup.
  let opening = 0
  let ended: string | undefined
  let disposed = false

  const release = host.guard.protect(context, {
    check: options.checkRequest,
    popups: 'allow',
    onBlocked: (request) => {
      if (blocked.length < 100) blocked.push(request)
    },
    onPopup: () => {
      popupsOpened++
    },
  })

  function end(reason: string): void {
    if (ended || disposed) return
    ended = reason
    onEnded(reason)
  }

  const events = {
    dialogs: options.dialogs,
    onDialog: (report: DialogReport) => {
      if (dialogs.length < 50) dialogs.push(report)
    },
    onConsole: (message: ConsoleMessage) => {
      consoleMessages.push({ ...message, text: message.text.slice(0, 2000) })
      if (consoleMessages.length > consoleKept) consoleMessages.shift()
    },
    onCrash: () => end('its page crashed'),
  }

  async function prepare(page: Page): Promise<void> {
    await page.setViewport(options.viewport)
    if (options.userAgent) await page.setUserAgent(options.userAgent)
    if (options.locale) await page.setExtraHTTPHeaders({ 'accept-language': options.locale })
  }

  /** Takes a page of the context into the tab list once (ours, a popup, a new tab), within the limit. */
  function adopt(page: Page): Promise<Tab | undefined> {
    let adopted = adopting.get(page)
    if (adopted) return adopted
    const popup = tabs.length > 0
    adopted = (async () => {
      if (popup) popupsTaken++
      if (tabs.length + opening >= limits.maxPages) {
        blocked.push({ url: page.url(), reason: `this session has its ${limits.maxPages} tabs already`, kind: 'Popup' })
        await page.close().catch(() => {})
        return undefined
      }
      opening++
      let tab: Tab
      try {
        tab = await openTab(page, events)
        await prepare(page).catch(() => {})
      } finally {
        opening--
      }
      tabs.push(tab)
      current = tabs.length - 1
      page.once('close', () => {
        const index = tabs.indexOf(tab)
        if (index === -1) return
        tabs.splice(index, 1)
        if (current >= index) current = Math.max(0, current - 1)
      })
      return tab
    })()
    adopting.set(page, adopted)
    return adopted
  }

  context.on('targetcreated', (target) => {
    if (target.type() !== 'page') return
    void target
      .page()
      .then((page) => (page ? adopt(page) : undefined))
      .catch(() => {})
  })
  const stopped = () => end('the browser stopped')
  host.browser.once('disconnected', stopped)

  // Before the first tab: a page may start a download as soon as it loads.
  const downloads = await createDownloads(host.browser, context, folder, limits.maxDownloadBytes, () => tabs)
  const first = await adopt(await context.newPage())
  if (!first) throw new Error('the first tab could not be opened')

  function tab(): Tab {
    if (ended) throw endedError(id, ended)
    const active = tabs[current] ?? tabs[0]
    if (!active) {
      throw new ToolError('conflict', 'This session has no open tab.', {
        hint: 'Open a page with browser_navigate, or close the session with browser_close.',
      })
    }
    return active
  }

  const actions = createActions({
    tab,
    tabs: () => tabs,
    current: () => current,
    select: (index) => {
      current = index
    },
    drain: () => ({ blocked: blocked.splice(0), dialogs: dialogs.splice(0) }),
    adopted: async () => {
      // Puppeteer reports a new window only once it has set it up: wait for it, within a bound.
      const until = Date.now() + 3_000
      while (popupsTaken < popupsOpened && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10))
      await Promise.all(adopting.values())
    },
    folder,
    downloads,
    limits,
    ended: () => ended,
    sessionId: id,
  })

  return {
    id,
    ...actions,
    console: (limit) => consoleMessages.slice(-limit),
    get ended() {
      return ended
    },
    async dispose() {
      if (disposed) return
      disposed = true
      host.browser.off('disconnected', stopped)
      release()
      await downloads.close()
      await context.close().catch(() => {})
      await rm(folder, { recursive: true, force: true }).catch(() => {})
    },
  }
}
