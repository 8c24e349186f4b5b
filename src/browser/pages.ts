import type { Browser, BrowserContext, HTTPRequest, Page } from 'puppeteer-core'
import { ToolError } from '../tools/errors'

/**
 * A bounded set of locked-down pages: at most `size` render at once, more callers queue (up to
 * `queueLimit`), idle pages are reused. Every page has JavaScript off and refuses every request
 * except data: and about: — user HTML can neither run code nor reach file://, the host or the network.
 */
export interface PagePool {
  use<T>(signal: AbortSignal | undefined, work: (page: Page) => Promise<T>): Promise<T>
  readonly active: number
  readonly queued: number
  /** Forget pages of a browser that went away. */
  reset(): void
}

const allowedUrl = /^(data:|about:blank$|about:srcdoc$)/i

export function blockRequests(request: HTTPRequest): void {
  if (request.isInterceptResolutionHandled()) return
  if (allowedUrl.test(request.url())) void request.continue()
  else void request.abort('blockedbyclient')
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
  /** Called when a failed page does not close in time: its renderer is stuck, so the browser must go. */
  onStuck: () => void
  closeTimeoutMs?: number
}

export function createPagePool(
  getContext: () => Promise<BrowserContext | Browser>,
  options: PagePoolOptions,
): PagePool {
  const { size, queueLimit = 100 } = options
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
    const timer = setTimeout(options.onStuck, options.closeTimeoutMs ?? 5_000)
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
    async use(signal, work) {
      await slot(signal)
      let page: Page | undefined
      let reusable = false
      try {
        page = idle.pop()
        if (!page || page.isClosed()) page = await lockDown(await (await getContext()).newPage())
        const result = await work(page)
        reusable = true
        return result
      } finally {
        // A page that failed (timeout, crash, abort) may be in any state: it is closed, not reused.
        if (page && reusable && !page.isClosed()) idle.push(page)
        else if (page && !page.isClosed()) discard(page)
        release()
      }
    },
  }
}
