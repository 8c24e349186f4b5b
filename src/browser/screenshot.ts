import type { HTTPRequest, Page } from 'puppeteer-core'
import { isToolError, ToolError } from '../core/errors'
import { captureImage } from './capture'
import { neutraliseMetaRefresh } from './pages'
import type { ScreenshotOptions } from './types'

function capture(page: Page, options: ScreenshotOptions): Promise<Uint8Array> {
  return captureImage(page, { format: options.format, quality: 85, fullPage: options.fullPage })
}

/** Untrusted HTML on a locked-down pool page (JavaScript off, every request refused). */
export async function photograph(page: Page, html: string, options: ScreenshotOptions): Promise<Uint8Array> {
  await page.setViewport({ width: options.width, height: options.height })
  await page.setContent(neutraliseMetaRefresh(html), { waitUntil: 'load' })
  return capture(page, options)
}

/**
 * A public page: every request (the document, its redirects, images, styles, frames) passes the same
 * SSRF check as http_fetch before Chromium may send it; other schemes are refused. JavaScript stays
 * off: request interception does not see WebSockets or WebRTC, so a script could reach around the check.
 * The first refusal of the document itself becomes the call's error.
 */
/**
 * Sends every request of a page through checkRequest first; other schemes are refused. Returns the
 * refusal of the main document, if there was one, so the caller can report it instead of a blank page.
 */
function guardRequests(page: Page, checkRequest: (url: string) => Promise<void>): () => ToolError | undefined {
  let refusal: ToolError | undefined
  page.on('request', (request: HTTPRequest) => {
    if (request.isInterceptResolutionHandled()) return
    const target = request.url()
    if (/^(data:|about:blank$)/i.test(target)) {
      void request.continue()
      return
    }
    void checkRequest(target).then(
      () => request.continue(),
      (error: unknown) => {
        if (request.isNavigationRequest() && request.frame() === page.mainFrame()) {
          refusal ??= isToolError(error) ? error : new ToolError('permission_denied', `Refusing to load ${target}.`)
        }
        return request.abort('blockedbyclient')
      },
    )
  })
  return () => refusal
}

/** Puppeteer's errors for a browser, page or connection that closed under a call. */
function browserGone(error: unknown): boolean {
  if (!(error instanceof Error)) return false
  if (['TargetCloseError', 'ConnectionClosedError'].includes(error.name)) return true
  return /Target closed|Session closed|Connection closed|frame was detached|Page crashed/i.test(error.message)
}

async function load(page: Page, url: string, refusal: () => ToolError | undefined, waitUntil: 'load' | 'networkidle2') {
  try {
    const response = await page.goto(url, { waitUntil, timeout: 0 })
    const refused = refusal()
    if (refused) throw refused
    if (!response) throw new ToolError('connection', `Could not load ${url}.`, { hint: 'Check the URL.' })
  } catch (error) {
    const refused = refusal()
    if (refused) throw refused
    if (isToolError(error)) throw error
    // The browser itself went away (killed, crashed, restarted): not the site's fault; the caller's
    // guard answers 503 unavailable.
    if (browserGone(error)) throw error
    throw new ToolError(
      'connection',
      `Could not load ${new URL(url).host}: ${(error as Error).message.split('\n')[0]}.`,
      {
        hint: 'Check the URL, or try again later if the site is down.',
        cause: error,
      },
    )
  }
}

/**
 * A public page: every request (the document, its redirects, images, styles, frames) passes the same
 * SSRF check as http_fetch before Chromium may send it. JavaScript stays off here.
 */
export async function photographUrl(
  page: Page,
  url: string,
  checkRequest: (url: string) => Promise<void>,
  options: ScreenshotOptions,
): Promise<Uint8Array> {
  await page.setJavaScriptEnabled(false)
  await page.setViewport({ width: options.width, height: options.height })
  await page.setRequestInterception(true)
  const refusal = guardRequests(page, checkRequest)
  await load(page, url, refusal, 'load')
  return capture(page, options)
}

// Channels request interception cannot see are removed before any page script runs, in every frame.
function removeUncheckedChannels(): void {
  const scope = globalThis as unknown as Record<string, unknown>
  for (const name of [
    'WebSocket',
    'WebTransport',
    'RTCPeerConnection',
    'webkitRTCPeerConnection',
    'Worker',
    'SharedWorker',
  ]) {
    delete scope[name]
    Object.defineProperty(scope, name, { value: undefined, configurable: false, writable: false })
  }
  if ('serviceWorker' in navigator) Object.defineProperty(navigator, 'serviceWorker', { value: undefined })
}

/**
 * The DOM of a JavaScript site after its scripts ran (web_fetch render). Scripts may fetch, but only
 * through intercepted requests, each checked; WebSockets are blocked at the network layer and
 * removed, with WebRTC and workers, from the page's globals.
 */
export async function renderedHtml(
  page: Page,
  url: string,
  checkRequest: (url: string) => Promise<void>,
): Promise<{ html: string; finalUrl: string }> {
  const session = await page.createCDPSession()
  await session.send('Network.enable')
  await session.send('Network.setBlockedURLs', { urls: ['ws://*', 'wss://*', 'ws:*', 'wss:*'] })
  await page.evaluateOnNewDocument(removeUncheckedChannels)
  await page.setRequestInterception(true)
  const refusal = guardRequests(page, checkRequest)
  await load(page, url, refusal, 'networkidle2')
  return { html: await page.content(), finalUrl: page.url() }
}
