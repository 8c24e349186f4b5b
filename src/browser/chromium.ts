import type { Browser, BrowserContext, Page, PaperFormat } from 'puppeteer-core'
import { ToolError } from '../core/errors'
import type { Logger } from '../core/logger'
import { type AddressResolver, type BrowserProxy, startBrowserProxy } from './browser-proxy'
import { chromiumArgs, extractChromium } from './extract'
import { createPagePool, type Guard, neutraliseMetaRefresh } from './pages'
import { photograph, photographUrl, renderedHtml } from './screenshot'
import type { SessionHost } from './session/session'
import { type ContextPolicy, createTargetGuard, type TargetGuard } from './target-guard'
import type { BrowserService, BrowserStatus, PdfRenderOptions } from './types'

export interface ChromiumOptions {
  /** A system Chromium (TOOLPORT_CHROMIUM_PATH); default: the one @sparticuz/chromium ships. */
  executablePath?: string | undefined
  /** Pages rendering at once. */
  pages: number
  log: Logger
  renderTimeoutMs?: number
  /**
   * The outbound address check (http_fetch's), answering the address it allowed. Every connection of
   * the browser goes through an egress proxy that asks it; unset, the browser reaches nothing.
   */
  egress?: AddressResolver | undefined
  /** Keep Chromium's zygote (renderers share its pages); off on Lambda (extract.ts says why). */
  zygote?: boolean
}

interface Running {
  browser: Browser
  /** The pool's context: locked-down pages for HTML, which may fetch nothing. */
  context: BrowserContext
  guard: TargetGuard
}

const fetchesNothing: ContextPolicy = {
  check: () => Promise.reject(new Error('rendered HTML may not fetch anything')),
  popups: 'close',
}

/**
 * One shared headless Chromium per service, launched on the first render (not at start), relaunched
 * on the next render after a crash. All state lives in this closure; concurrent first calls share
 * one launch promise, so extraction and launch happen once.
 */
async function render(page: Page, html: string, pdf: PdfRenderOptions): Promise<Uint8Array> {
  await page.setContent(neutraliseMetaRefresh(html), { waitUntil: 'load' })
  const bytes = await page.pdf({
    format: pdf.format as PaperFormat,
    landscape: pdf.landscape,
    margin: pdf.margin,
    printBackground: pdf.printBackground,
    displayHeaderFooter: pdf.headerTemplate !== undefined || pdf.footerTemplate !== undefined,
    headerTemplate: pdf.headerTemplate ?? '<span></span>',
    footerTemplate: pdf.footerTemplate ?? '<span></span>',
    timeout: 0,
  })
  return new Uint8Array(bytes)
}

/** The shared browser, and for browser sessions the Chromium and target guard underneath it. */
export interface ChromiumBrowser extends BrowserService {
  sessionHost(): Promise<SessionHost>
}

export function createChromiumBrowser(options: ChromiumOptions): ChromiumBrowser {
  const timeout = options.renderTimeoutMs ?? 30_000
  let running: Promise<Running> | undefined
  let launches = 0
  let lastError: string | undefined
  let closed = false
  let proxy: Promise<BrowserProxy> | undefined

  // A page can try thousands of connections a second: at most 10 refusals a minute reach the log.
  let refusalWindow = 0
  let refusalsLogged = 0
  function logRefusal(target: string, error: unknown): void {
    const minute = Math.floor(Date.now() / 60_000)
    if (minute !== refusalWindow) {
      refusalWindow = minute
      refusalsLogged = 0
    }
    if (++refusalsLogged > 10) return
    options.log.info('browser connection refused', {
      target,
      cause: error instanceof Error ? error.message : String(error),
      ...(refusalsLogged === 10 ? { note: 'further refusals this minute are not logged' } : {}),
    })
  }

  async function launch(): Promise<Running> {
    const puppeteer = await import('puppeteer-core')
    const system = options.executablePath !== undefined
    const executablePath = options.executablePath ?? (await extractChromium())
    // One proxy for the service's lifetime: a relaunched browser gets the same one.
    proxy ??= startBrowserProxy({ resolve: options.egress, onRefused: logRefusal })
    const egress = await proxy
    const args = [
      ...(system
        ? ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--no-first-run']
        : await chromiumArgs({ zygote: options.zygote ?? false })),
      ...egress.chromiumArgs,
    ]
    // A pipe instead of a DevTools port: no page can reach the browser's own control channel.
    const browser = await puppeteer.launch({ executablePath, args, headless: 'shell', timeout: 60_000, pipe: true })
    launches++
    lastError = undefined
    browser.once('disconnected', () => {
      running = undefined
      pool.reset()
      if (!closed) options.log.warn('browser disconnected; it is relaunched on the next render')
    })
    const guard = await createTargetGuard(browser, options.log)
    // A separate context keeps rendered pages away from any state of the default one.
    const context = await browser.createBrowserContext()
    guard.protect(context, fetchesNothing)
    return { browser, context, guard }
  }

  function current(): Promise<Running> {
    if (closed) return Promise.reject(new ToolError('unavailable', 'The browser is shut down.'))
    running ??= launch().catch((error: unknown) => {
      running = undefined
      lastError = error instanceof Error ? error.message : String(error)
      options.log.error('browser launch failed', { cause: lastError })
      throw new ToolError('unavailable', 'The PDF browser could not be started.', {
        cause: error,
        hint: 'Try again shortly; markdown and text can be rendered without a browser.',
        headers: { 'Retry-After': '5' },
      })
    })
    return running
  }

  const pool = createPagePool(async () => (await current()).context, {
    size: options.pages,
    // Only the browser that got stuck is killed: by now a relaunched one may be serving other calls.
    onStuck: (browser) => {
      if (!browser.connected) return
      options.log.warn('a browser page did not close or open in time; restarting the browser')
      browser.process()?.kill('SIGKILL')
    },
  })

  /**
   * Work on a page of a browser context of its own, under the policy: cookies and storage die with the
   * call, and so does every window the page managed to open. Used for URL renders, whose pages load
   * the network; the context is closed afterwards whatever happened. It takes one of the pool's slots
   * (TOOLPORT_BROWSER_PAGES) like any render, before the context exists. Its deadline counts from the
   * call, waiting for the slot included: a queued render behind a stuck one ends at its own deadline
   * (504) rather than starting late on a browser that is about to be restarted.
   */
  function isolated<T>(
    signal: AbortSignal | undefined,
    what: string,
    policy: ContextPolicy,
    work: (page: Page) => Promise<T>,
  ): Promise<T> {
    const guard = withDeadline(what, 'Try a smaller or faster page.', Date.now() + timeout)
    const expired = AbortSignal.timeout(timeout)
    const waiting = signal ? AbortSignal.any([signal, expired]) : expired
    return guard(() =>
      pool.hold(waiting, async () => {
        const { browser, guard: targets } = await current()
        const context = await guard(() => browser.createBrowserContext())
        const release = targets.protect(context, policy)
        try {
          return await pool.fresh(context, guard, work)
        } finally {
          release()
          void context.close().catch(() => {})
        }
      }),
    )
  }

  /** What the deadline rejects with, told apart from anything the browser throws. */
  const deadlineHit = Symbol('render deadline')

  /**
   * A guard for pool work: the render deadline, and every failure turned into a ToolError. A deadline
   * hit (or a puppeteer timeout) is 504 timeout; anything else the browser throws (a closed
   * connection or target, a protocol error, a crashed page) is 503 unavailable, never a 500.
   * With `end` (a Date.now() time), every step it guards shares that one deadline instead of its own.
   */
  function withDeadline(what: string, hint: string, end?: number): Guard {
    return async (work) => {
      let timer: ReturnType<typeof setTimeout> | undefined
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(deadlineHit), end === undefined ? timeout : Math.max(0, end - Date.now()))
      })
      try {
        return await Promise.race([work(), deadline])
      } catch (error) {
        if (error instanceof ToolError) throw error
        if (error === deadlineHit || (error instanceof Error && error.name === 'TimeoutError')) {
          throw new ToolError('timeout', `${what} took longer than ${timeout / 1000} s.`, {
            hint,
            cause: error === deadlineHit ? undefined : error,
          })
        }
        throw new ToolError('unavailable', `The browser failed while ${what[0]?.toLowerCase()}${what.slice(1)}.`, {
          cause: error,
          hint: 'Try again; a crashed browser is restarted on the next call.',
          headers: { 'Retry-After': '1' },
        })
      } finally {
        clearTimeout(timer)
      }
    }
  }

  return {
    async sessionHost() {
      const { browser, guard } = await current()
      return { browser, guard }
    },

    async screenshot(target, shot, signal) {
      if ('html' in target) {
        return pool.use(signal, withDeadline('Taking the screenshot', 'Try a smaller or faster page.'), (page) =>
          photograph(page, target.html, shot),
        )
      }
      // A URL needs a page of its own: requests checked one by one, closed afterwards with its context.
      const policy: ContextPolicy = { check: target.checkRequest, popups: 'close' }
      return isolated(signal, 'Loading the page', policy, (page) =>
        photographUrl(page, target.url, target.checkRequest, shot),
      )
    },

    async renderPage(url, checkRequest, signal) {
      const policy: ContextPolicy = { check: checkRequest, popups: 'close' }
      return isolated(signal, 'Rendering the page', policy, (page) => renderedHtml(page, url, checkRequest))
    },

    async renderPdf(html: string, pdf: PdfRenderOptions, signal?: AbortSignal) {
      // Puppeteer's own timeouts do not cover a renderer stuck parsing (setContent's document.write).
      return pool.use(
        signal,
        withDeadline('Rendering the PDF', 'Send a smaller document, or split it into several PDFs.'),
        (page) => render(page, html, pdf),
      )
    },

    status(): BrowserStatus {
      const base = { active: pool.active, queued: pool.queued, launches }
      // /readyz is public: the cause (paths, library errors) goes to the log, not here.
      if (lastError)
        return {
          status: 'error',
          detail: 'the last launch failed (see the service log); retried on the next render',
          ...base,
        }
      return running ? { status: 'ok', ...base } : { status: 'idle', detail: 'launched on first use', ...base }
    },

    async close() {
      closed = true
      const instance = await running?.catch(() => undefined)
      running = undefined
      await instance?.browser.close().catch(() => {})
      await (await proxy?.catch(() => undefined))?.close()
    },
  }
}
