import type { Browser, BrowserContext, HTTPRequest, Page } from 'puppeteer-core'
import { ToolError } from '../core/errors'

/** Runs browser work under the render deadline and turns its failures into ToolErrors. */
export type Guard = <T>(work: () => Promise<T>) => Promise<T>

/**
 * A bounded set of locked-down pages: at most `size` render at once, more callers queue (up to
 * `queueLimit`), idle pages are reused. Every page has JavaScript off and refuses every request
 * except data: and about: — user HTML can neither run code nor reach file://, the host or the network —
 * and its main frame never navigates away from the content it was given.
 */
export interface PagePool {
  /**
   * Runs work on a locked-down page once a slot is free. The guard covers getting the page (creating
   * and locking down a new one) as well as the work: a browser that stops answering ends the call at
   * the deadline, like a render that does.
   */
  use<T>(signal: AbortSignal | undefined, guard: Guard, work: (page: Page) => Promise<T>): Promise<T>
  /**
   * Runs work once a slot is free (queueing like use, 429 past the queue), holding the slot until the
   * work ends: what renders outside the pool's pages (a URL in a context of its own) counts too.
   */
  hold<T>(signal: AbortSignal | undefined, work: () => Promise<T>): Promise<T>
  /**
   * Runs work on a new page of its own in the given context, created under the guard, not locked down
   * (the work sets its own fences) and closed afterwards. It takes no slot: call it within hold.
   */
  fresh<T>(context: BrowserContext, guard: Guard, work: (page: Page) => Promise<T>): Promise<T>
  readonly active: number
  readonly queued: number
  /** Forget pages of a browser that went away. */
  reset(): void
}

const allowedUrl = /^(data:|about:blank$|about:srcdoc$)/i

export function blockRequests(request: HTTPRequest): void {
  if (request.isInterceptResolutionHandled()) return
  // The content is written into the page, never loaded: any navigation of the main frame (a meta
  // refresh, say) would replace it. 'aborted' drops the navigation and keeps the document, where
  // any other refusal would commit an error page in its place.
  if (request.isNavigationRequest() && request.frame()?.parentFrame() === null) void request.abort('aborted')
  else if (allowedUrl.test(request.url())) void request.continue()
  else void request.abort('blockedbyclient')
}

/**
 * Makes every <meta> of untrusted HTML inert as http-equiv: a refresh would navigate the page away
 * from the content (to about:blank, or reload it, neither of which request interception sees).
 * Each meta start tag gets an empty http-equiv first; the HTML parser keeps the first of duplicate
 * attributes, so whatever http-equiv the tag carries, however it is spelled or quoted, is dropped.
 */
export function neutraliseMetaRefresh(html: string): string {
  return html.replace(/<meta(?=[\t\n\f\r />])/gi, (tag) => `${tag} http-equiv=""`)
}

async function lockDown(page: Page): Promise<Page> {
  await page.setJavaScriptEnabled(false)
  await page.setRequestInterception(true)
  page.on('request', blockRequests)
  // Workers and service workers cannot start without JavaScript; offline mode is a second fence.
  await page.setOfflineMode(true)
  return page
}

export interface PagePoolOptions {
  size: number
  queueLimit?: number
  /**
   * Called when a page does not close in time after a failed render, or a new page does not arrive
   * in time after the deadline: the renderer or the browser is stuck, so the browser must go.
   */
  onStuck: (browser: Browser) => void
  closeTimeoutMs?: number
}

export function createPagePool(getContext: () => Promise<BrowserContext>, options: PagePoolOptions): PagePool {
  const { size, queueLimit = 100 } = options
  const closeTimeoutMs = options.closeTimeoutMs ?? 5_000
  let active = 0
  let idle: Page[] = []
  const waiting: Array<() => void> = []

  async function slot(signal: AbortSignal | undefined): Promise<void> {
    if (active < size) {
      active++
      return
    }
    if (waiting.length >= queueLimit) {
      throw new ToolError('rate_limited', `All ${size} browser pages are busy and ${queueLimit} renders are waiting.`, {
        hint: 'Wait a few seconds (Retry-After) and call again.',
        headers: { 'Retry-After': '2' },
      })
    }
    await new Promise<void>((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener('abort', onAbort)
        resolve()
      }
      const onAbort = () => {
        const index = waiting.indexOf(grant)
        if (index !== -1) waiting.splice(index, 1)
        reject(signal?.reason)
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      waiting.push(grant)
    })
  }

  // A page whose renderer is busy (a huge layout) closes only when the work ends: the caller is
  // answered at once, and a page still open after the grace period takes the browser down with it.
  function discard(page: Page): void {
    const timer = setTimeout(() => options.onStuck(page.browser()), closeTimeoutMs)
    page
      .close()
      .catch(() => {})
      .finally(() => clearTimeout(timer))
  }

  function release(): void {
    const next = waiting.shift()
    if (next) next()
    else active--
  }

  /**
   * Runs work under the guard on `reused`, or on a page created (and prepared) inside the guard. When
   * the guard gives up while the page is still being created, a page that arrives later is closed,
   * and one that does not arrive within the grace period means the browser is stuck. `settle` decides
   * what becomes of the page afterwards (back to the pool, or closed).
   */
  async function run<T>(
    context: BrowserContext | undefined,
    reused: Page | undefined,
    prepare: (page: Page) => Promise<Page>,
    guard: Guard,
    work: (page: Page) => Promise<T>,
    settle: (page: Page | undefined, ok: boolean) => void,
  ): Promise<T> {
    let page = reused
    let creating: Promise<Page> | undefined
    let over = false
    let ok = false
    try {
      const result = await guard(async () => {
        if (!page) {
          if (!context) throw new Error('no browser context')
          const created = context.newPage()
          creating = created
          try {
            page = await created
          } finally {
            creating = undefined
          }
          if (over) throw new Error('the page arrived after the deadline')
          await prepare(page)
        }
        return work(page)
      })
      ok = true
      return result
    } finally {
      over = true
      if (creating && context) {
        const browser = context.browser()
        const timer = setTimeout(() => options.onStuck(browser), closeTimeoutMs)
        creating.then(
          (late) => {
            clearTimeout(timer)
            discard(late)
          },
          () => clearTimeout(timer),
        )
      }
      settle(page, ok)
    }
  }

  return {
    get active() {
      return active
    },
    get queued() {
      return waiting.length
    },
    reset() {
      idle = []
    },
    async use(signal, guard, work) {
      await slot(signal)
      try {
        let reused = idle.pop()
        while (reused && (reused.isClosed() || !reused.browser().connected)) reused = idle.pop()
        // Launching the browser has a deadline of its own and fails as a ToolError.
        const context = reused ? undefined : await getContext()
        return await run(context, reused, lockDown, guard, work, (page, ok) => {
          // A page that failed (timeout, crash, abort) may be in any state: it is closed, not reused.
          if (page && ok && !page.isClosed()) idle.push(page)
          else if (page && !page.isClosed()) discard(page)
        })
      } finally {
        release()
      }
    },
    async hold(signal, work) {
      await slot(signal)
      try {
        return await work()
      } finally {
        release()
      }
    },
    async fresh(context, guard, work) {
      return run(
        context,
        undefined,
        async (page) => page,
        guard,
        work,
        (page) => {
          if (page && !page.isClosed()) discard(page)
        },
      )
    },
  }
}
