/**
 * The shared browser as tools see it. Types only, with no puppeteer import, so tool code stays
 * portable; the Chromium implementation lives in ./chromium.ts and is built by the Node runtime.
 */
export type PaperFormat = 'A3' | 'A4' | 'A5' | 'Letter' | 'Legal' | 'Tabloid'

export interface PdfRenderOptions {
  format: PaperFormat
  landscape: boolean
  /** CSS lengths, e.g. "20mm". */
  margin: { top: string; right: string; bottom: string; left: string }
  /** Chromium header/footer templates (classes pageNumber, totalPages, title, date). */
  headerTemplate?: string
  footerTemplate?: string
  printBackground: boolean
}

export interface BrowserStatus {
  /** idle: not launched yet (it starts on first use); ok: running; error: the last launch failed. */
  status: 'ok' | 'idle' | 'error'
  detail?: string
  active: number
  queued: number
  launches: number
}

export interface ScreenshotOptions {
  width: number
  height: number
  fullPage: boolean
  format: 'png' | 'jpeg'
}

/** A page to photograph: untrusted HTML (rendered locked down), or a public URL (every request checked). */
export type ScreenshotTarget =
  | { html: string }
  | {
      url: string
      /** Throws (permission_denied) for a request the page may not make; called for every request. */
      checkRequest: (url: string) => Promise<void>
    }

export interface BrowserService {
  /**
   * A PNG or JPEG of the viewport (or the full page). HTML renders like renderPdf: no JavaScript, no
   * requests. A URL loads with JavaScript on, and every request it makes goes through checkRequest.
   */
  screenshot(target: ScreenshotTarget, options: ScreenshotOptions, signal?: AbortSignal): Promise<Uint8Array>
  /** The HTML of a page after its JavaScript ran, every request checked (web_fetch with render). */
  renderPage(
    url: string,
    checkRequest: (url: string) => Promise<void>,
    signal?: AbortSignal,
  ): Promise<{ html: string; finalUrl: string }>
  /**
   * Renders untrusted HTML to PDF with JavaScript off and every request except data: and about:
   * refused. Throws ToolError unavailable when Chromium cannot start, timeout when rendering hangs.
   */
  renderPdf(html: string, options: PdfRenderOptions, signal?: AbortSignal): Promise<Uint8Array>
  status(): BrowserStatus
  close(): Promise<void>
}
