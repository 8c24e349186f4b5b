import type { Browser, BrowserContext, Page } from 'puppeteer-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromiumArgs, extractChromium } from '../../src/browser/extract'
import { createPagePool, type Guard, neutraliseMetaRefresh, type PagePool } from '../../src/browser/pages'
import { photograph } from '../../src/browser/screenshot'

describe('neutraliseMetaRefresh', () => {
  it('puts an empty http-equiv first in every meta start tag, and touches nothing else', () => {
    expect(neutraliseMetaRefresh('<meta http-equiv="refresh" content="0"><p>meta</p>')).toBe(
      '<meta http-equiv="" http-equiv="refresh" content="0"><p>meta</p>',
    )
    expect(neutraliseMetaRefresh('<META\tHTTP-EQUIV=Refresh><meta/><meta>')).toBe(
      '<META http-equiv=""\tHTTP-EQUIV=Refresh><meta http-equiv=""/><meta http-equiv="">',
    )
    expect(neutraliseMetaRefresh('<metadata><p>a <meta-x></p>')).toBe('<metadata><p>a <meta-x></p>')
  })
})

/** How long a page is held after its content is set: past the longest refresh delay below. */
const holdMs = 1_500

describe('a pooled page', () => {
  let browser: Browser
  let context: BrowserContext
  let pool: PagePool
  const guard: Guard = (work) => work()
  const shot = { width: 400, height: 300, fullPage: false, format: 'png' as const }

  beforeAll(async () => {
    const puppeteer = await import('puppeteer-core')
    browser = await puppeteer.launch({
      executablePath: await extractChromium(),
      args: await chromiumArgs(),
      headless: 'shell',
    })
    context = await browser.createBrowserContext()
    pool = createPagePool(async () => context, { size: 1, onStuck: () => {} })
  })
  afterAll(async () => browser?.close())

  async function heldContent(page: Page): Promise<{ url: string; text: string; navigations: string[] }> {
    const navigations: string[] = []
    const onNavigated = (frame: { url(): string }) => navigations.push(frame.url())
    page.on('framenavigated', onNavigated)
    await new Promise((resolve) => setTimeout(resolve, holdMs))
    page.off('framenavigated', onNavigated)
    const text = await page.$eval('body', (body) => body.textContent ?? '')
    return { url: page.url(), text, navigations }
  }

  it.each([
    '<meta http-equiv="refresh" content="0;url=https://1.1.1.1/">',
    '<meta http-equiv="refresh" content="1;url=https://1.1.1.1/">',
    '<meta http-equiv="refresh" content="0">',
    '<meta http-equiv="refresh" content="1">',
    '<meta http-equiv="refresh" content="0;url=about:blank">',
    "<META HTTP-EQUIV=Refresh CONTENT='1; URL=about:blank'>",
    '<meta content="0;url=about:blank" http-equiv="&#82;efresh">',
    '<meta/http-equiv=refresh content="0;url=data:text/html,replaced">',
    '<svg><meta http-equiv="refresh" content="0;url=about:blank"></svg>',
  ])('keeps the user content of %s, also after the refresh delay', async (meta) => {
    const held = await pool.use(undefined, guard, async (page) => {
      await photograph(page, `${meta}<p>the user content</p>`, shot)
      return heldContent(page)
    })
    expect(held).toEqual({ url: 'about:blank', text: 'the user content', navigations: [] })
  })

  it('refuses a navigation of the main frame without replacing the document, even unneutralised', async () => {
    const held = await pool.use(undefined, guard, async (page) => {
      // setContent directly: only the request interception stands in the way here.
      await page.setContent('<meta http-equiv="refresh" content="0;url=https://1.1.1.1/"><p>still here</p>')
      return heldContent(page)
    })
    expect(held).toEqual({ url: 'about:blank', text: 'still here', navigations: [] })
  })

  it('still lets frames load data: content', async () => {
    const frameText = await pool.use(undefined, guard, async (page) => {
      await photograph(page, '<iframe src="data:text/html,<p>framed</p>"></iframe>', shot)
      const frame = page.frames().find((candidate) => candidate !== page.mainFrame())
      return frame?.$eval('body', (body) => body.textContent)
    })
    expect(frameText).toBe('framed')
  })
})
