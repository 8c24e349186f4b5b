import type { Browser, BrowserContext, Page, PaperFormat } from 'puppeteer-core'
import { ToolError } from '../core/errors'
import type { Logger } from '../core/logger'
import { chromiumArgs, extractChromium } from './extract'
import { createPagePool, type Guard, neutraliseMetaRefresh } from './pages'
import { photograph, photographUrl, renderedHtml } from './screenshot'
import type { BrowserService, BrowserStatus, PdfRenderOptions } from './types'

export interface ChromiumOptions {
  /** A system Chromium (TOOLPORT_CHROMIUM_PATH); default: the one @sparticuz/chromium ships. */
  executablePath?: string | undefined
  /** Pages rendering at once. */
  pages: number
  log: Logger
  renderTimeoutMs?: number
}

interface Running {
  browser: Browser
  context: BrowserContext
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

export function createChromiumBrowser(options: ChromiumOptions): BrowserService {
  const timeout = options.renderTimeoutMs ?? 30_000
  let running: Promise<Running> | undefined
  let launches = 0
  let lastError: string | undefined
  let closed = false

  async function launch(): Promise<Running> {
    const puppeteer = await import('puppeteer-core')
    const system = options.executablePath !== undefined
    const executablePath = options.executablePath ?? (await extractChromium())
    const args = system
      ? ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--no-first-run']
      : await chromiumArgs()
    const browser = await puppeteer.launch({ executablePath, args, headless: 'shell', timeout: 60_000 })
    launches++
    lastError = undefined
    browser.once('disconnected', () => {
      running = undefined
      pool.reset()
      if (!closed) options.log.warn('browser disconnected; it is relaunched on the next render')
    })
    // A separate context keeps rendered pages away from any state of the default one.
    const context = await browser.createBrowserContext()
    return { browser, context }
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

  /** What the deadline rejects with, told apart from anything the browser throws. */
  const deadlineHit = Symbol('render deadline')

  /**
   * A guard for pool work: the render deadline, and every failure turned into a ToolError. A deadline
   * hit (or a puppeteer timeout) is 504 timeout; anything else the browser throws (a closed
   * connection or target, a protocol error, a crashed page) is 503 unavailable, never a 500.
   */
  function withDeadline(what: string, hint: string): Guard {
    return async (work) => {
      let timer: ReturnType<typeof setTimeout> | undefined
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(deadlineHit), timeout)
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
    async screenshot(target, shot, signal) {
      if ('html' in target) {
        return pool.use(signal, withDeadline('Taking the screenshot', 'Try a smaller or faster page.'), (page) =>
          photograph(page, target.html, shot),
        )
      }
      // A URL needs a page of its own: JavaScript on, requests checked one by one, closed afterwards.
      return pool.fresh(withDeadline('Loading the page', 'Try a smaller or faster page.'), (page) =>
        photographUrl(page, target.url, target.checkRequest, shot),
      )
    },

    async renderPage(url, checkRequest) {
      return pool.fresh(withDeadline('Rendering the page', 'Try a smaller or faster page.'), (page) =>
        renderedHtml(page, url, checkRequest),
      )
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
    },
  }
}
