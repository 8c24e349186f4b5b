import type { Page, ScreenshotClip } from 'puppeteer-core'
import { ToolError } from '../core/errors'

/** The largest width or height a JPEG can have (its header holds 16 bits); Chromium answers nothing past it. */
export const jpegMaxPixels = 65_535

export interface CaptureOptions {
  format: 'png' | 'jpeg'
  quality: number
  fullPage: boolean
  /** A region of the page (an element's box) instead of the viewport or the full page. */
  clip?: ScreenshotClip | undefined
}

/** The size in image pixels of what the capture would cover: the clip, the whole page or the viewport. */
async function capturedSize(page: Page, options: CaptureOptions): Promise<{ width: number; height: number }> {
  const scale = page.viewport()?.deviceScaleFactor ?? 1
  if (options.clip) return { width: options.clip.width * scale, height: options.clip.height * scale }
  if (!options.fullPage) {
    const viewport = page.viewport()
    return { width: (viewport?.width ?? 0) * scale, height: (viewport?.height ?? 0) * scale }
  }
  // Layout metrics answer also with JavaScript off (the locked-down pages), unlike an evaluate.
  const cdp = await page.createCDPSession()
  try {
    const { cssContentSize } = await cdp.send('Page.getLayoutMetrics')
    return { width: cssContentSize.width * scale, height: cssContentSize.height * scale }
  } finally {
    await cdp.detach().catch(() => {})
  }
}

/**
 * A screenshot that is an image or an error, never an empty file: a JPEG taller or wider than the
 * format can hold is refused before Chromium is asked, and an empty capture (Chromium's answer to
 * an image it cannot encode) is refused too, so no 0-byte file is stored with a 200.
 */
export async function captureImage(page: Page, options: CaptureOptions): Promise<Uint8Array> {
  if (options.format === 'jpeg') {
    const size = await capturedSize(page, options)
    const longest = Math.ceil(Math.max(size.width, size.height))
    if (longest > jpegMaxPixels) {
      throw new ToolError(
        'size_exceeded',
        `The page is ${longest} px long, and a JPEG can be at most ${jpegMaxPixels.toLocaleString('en-US')} px high or wide.`,
        {
          hint: 'Use format png, or capture the viewport (full_page false) or one element instead of the full page.',
          details: { field: 'format', limit: jpegMaxPixels },
        },
      )
    }
  }
  const bytes = await page.screenshot({
    type: options.format,
    ...(options.format === 'jpeg' ? { quality: options.quality } : {}),
    ...(options.clip ? { clip: options.clip, captureBeyondViewport: true } : { fullPage: options.fullPage }),
  })
  if (bytes.byteLength === 0) {
    throw new ToolError('size_exceeded', 'The browser could not encode this screenshot: the image came back empty.', {
      hint: 'The page is likely too large to capture: capture the viewport (full_page false) or one element instead.',
    })
  }
  return new Uint8Array(bytes)
}
