import type { HTTPRequest, Page } from 'puppeteer-core'
import { isToolError, ToolError } from '../tools/errors'
import type { ScreenshotOptions } from './types'

async function capture(page: Page, options: ScreenshotOptions): Promise<Uint8Array> {
  const bytes = await page.screenshot({
    type: options.format,
    fullPage: options.fullPage,
    ...(options.format === 'jpeg' ? { quality: 85 } : {}),
  })
  return new Uint8Array(bytes)
}

/** Untrusted HTML on a locked-down pool page (JavaScript off, every request refused). */
export async function photograph(page: Page, html: string, options: ScreenshotOptions): Promise<Uint8Array> {
  await page.setViewport({ width: options.width, height: options.height })
  await page.setContent(html, { waitUntil: 'load' })
  return capture(page, options)
}

/**
 * A public page: every request (the document, its redirects, images, styles, frames) passes the same
 * SSRF check as http_fetch before Chromium may send it; other schemes are refused. JavaScript stays
 * off: request interception does not see WebSockets or WebRTC, so a script could reach around the check.
 * The first refusal of the document itself becomes the call's error.
 */
export async function photographUrl(
  page: Page,
  url: string,
  checkRequest: (url: string) => Promise<void>,
  options: ScreenshotOptions,
): Promise<Uint8Array> {
  let refusal: ToolError | undefined
  await page.setJavaScriptEnabled(false)
  await page.setViewport({ width: options.width, height: options.height })
  await page.setRequestInterception(true)
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
  try {
    const response = await page.goto(url, { waitUntil: 'load', timeout: 0 })
    if (refusal) throw refusal
    if (!response) throw new ToolError('connection', `Could not load ${url}.`, { hint: 'Check the URL.' })
  } catch (error) {
    if (refusal) throw refusal
    if (isToolError(error)) throw error
    throw new ToolError(
      'connection',
      `Could not load ${new URL(url).host}: ${(error as Error).message.split('\n')[0]}.`,
      {
        hint: 'Check the URL, or try again later if the site is down.',
        cause: error,
      },
    )
  }
  return capture(page, options)
}
