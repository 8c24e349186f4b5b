import { execFileSync } from 'node:child_process'
import { PDFDocument } from 'pdf-lib'
import { afterAll, describe, expect, it } from 'vitest'
import { createChromiumBrowser } from '../../src/browser/chromium'
import { chromiumArgs } from '../../src/browser/extract'
import type { BrowserService, PdfRenderOptions } from '../../src/browser/types'
import { silentLogger } from '../../src/core/logger'
import { chromiumChildren } from '../support/chromium'

const options: PdfRenderOptions = {
  format: 'A4',
  landscape: false,
  margin: { top: '10mm', right: '10mm', bottom: '10mm', left: '10mm' },
  printBackground: true,
}

describe('shared Chromium', () => {
  const browser = createChromiumBrowser({ pages: 2, log: silentLogger })
  afterAll(() => browser.close())

  it('drops the flags that weaken a multi-process browser', async () => {
    const args = await chromiumArgs()
    for (const flag of ['--single-process', '--disable-web-security', '--allow-running-insecure-content']) {
      expect(args).not.toContain(flag)
    }
    expect(args).toContain('--no-sandbox')
    // Lambda's default keeps the package's --no-zygote; elsewhere the zygote stays.
    expect(args).toContain('--no-zygote')
    expect(await chromiumArgs({ zygote: true })).not.toContain('--no-zygote')
  })

  it('keeps the zygote when asked: renderers forked from it, and renders work', { timeout: 120_000 }, async () => {
    const withZygote = createChromiumBrowser({ pages: 1, log: silentLogger, zygote: true })
    try {
      const bytes = await withZygote.renderPdf('<h1>Forked</h1>', options)
      expect((await PDFDocument.load(bytes)).getPageCount()).toBe(1)
      const host = await withZygote.sessionHost()
      const root = host.browser.process()?.pid
      if (!root) throw new Error('no browser process')
      // The browser's process tree: a --type=zygote process, and renderers under it, not under the browser.
      const tree = execFileSync('ps', ['-e', '-o', 'pid=,ppid=,args=']).toString().split('\n')
      const under = (parent: number) =>
        tree.filter((line) => Number(line.trim().split(/\s+/)[1]) === parent).map((line) => line.trim())
      const zygotes = under(root).filter((line) => line.includes('--type=zygote'))
      expect(zygotes.length).toBeGreaterThan(0)
      expect(under(root).some((line) => line.includes('--type=renderer'))).toBe(false)
    } finally {
      await withZygote.close()
    }
  })

  it('launches once for concurrent first calls and pools pages', { timeout: 120_000 }, async () => {
    expect(browser.status()).toMatchObject({ status: 'idle', launches: 0 })
    const renders = await Promise.all(
      Array.from({ length: 5 }, (_, index) => browser.renderPdf(`<h1>Page ${index}</h1>`, options)),
    )
    for (const bytes of renders) expect((await PDFDocument.load(bytes)).getPageCount()).toBe(1)
    expect(browser.status()).toMatchObject({ status: 'ok', launches: 1, active: 0, queued: 0 })
  })

  it('relaunches on the next call after the browser crashed', { timeout: 120_000 }, async () => {
    await browser.renderPdf('<p>warm</p>', options)
    const children = chromiumChildren()
    expect(children.length).toBeGreaterThan(0)
    for (const pid of children) process.kill(pid, 'SIGKILL')
    await new Promise((resolve) => setTimeout(resolve, 500))
    const bytes = await browser.renderPdf('<p>after the crash</p>', options)
    expect((await PDFDocument.load(bytes)).getPageCount()).toBe(1)
    expect(browser.status()).toMatchObject({ status: 'ok', launches: 2 })
  })

  it('fails a render cleanly when Chromium is killed in the middle of it, then works again', {
    timeout: 120_000,
  }, async () => {
    await browser.renderPdf('<p>warm</p>', options)
    const slow = browser.renderPdf(`<table>${'<tr><td>x</td><td>y</td></tr>'.repeat(300_000)}</table>`, options)
    await new Promise((resolve) => setTimeout(resolve, 300))
    for (const pid of chromiumChildren()) process.kill(pid, 'SIGKILL')
    await expect(slow).rejects.toMatchObject({ name: 'ToolError' })
    const bytes = await browser.renderPdf('<p>after the kill</p>', options)
    expect((await PDFDocument.load(bytes)).getPageCount()).toBe(1)
  })

  it('times out a render that never finishes loading, and keeps working', { timeout: 60_000 }, async () => {
    // The deadline also covers creating the next call's page, which is slow beside a busy renderer.
    const quick = createChromiumBrowser({ pages: 1, log: silentLogger, renderTimeoutMs: 5_000 })
    try {
      // A huge document forces layout well past the timeout.
      const huge = `<table>${'<tr><td>x</td><td>y</td></tr>'.repeat(400_000)}</table>`
      await expect(quick.renderPdf(huge, options)).rejects.toMatchObject({ code: 'timeout' })
      const bytes = await quick.renderPdf('<p>fine</p>', options)
      expect(bytes.byteLength).toBeGreaterThan(0)
    } finally {
      await quick.close()
    }
  })
})

/** The one Chromium process `launch` started: the child of this process that was not there before. */
async function launchedChromium(launch: () => Promise<unknown>): Promise<number> {
  const before = new Set(chromiumChildren())
  await launch()
  const started = chromiumChildren().filter((pid) => !before.has(pid))
  expect(started).toHaveLength(1)
  return started[0] as number
}

async function settledCodes(calls: Array<Promise<unknown>>): Promise<string[]> {
  return (await Promise.allSettled(calls)).map((result) =>
    result.status === 'fulfilled' ? 'ok' : `${result.reason?.name}:${result.reason?.code}`,
  )
}

/** Waits, without a deadline of its own (the test's timeout bounds it), until the browser went away. */
async function untilRelaunchNeeded(browser: BrowserService): Promise<void> {
  while (browser.status().status !== 'idle') await new Promise((resolve) => setTimeout(resolve, 100))
}

describe('a Chromium that stops answering', () => {
  it('ends calls waiting for a new page at the deadline, then restarts the browser', { timeout: 60_000 }, async () => {
    const quick = createChromiumBrowser({ pages: 1, log: silentLogger, renderTimeoutMs: 5_000 })
    let pid: number | undefined
    try {
      // Warmed through a page of its own, so the pool has no idle page: every call must create one.
      pid = await launchedChromium(() => quick.renderPage('data:text/html,<p>warm</p>', async () => {}))
      process.kill(pid, 'SIGSTOP')
      const codes = await settledCodes([
        quick.renderPdf('<p>while stopped</p>', options),
        quick.screenshot(
          { url: 'http://1.1.1.1/', checkRequest: async () => {} },
          { width: 200, height: 100, fullPage: false, format: 'png' },
        ),
        quick.renderPage('data:text/html,<p>x</p>', async () => {}),
      ])
      expect(codes).toEqual(['ToolError:timeout', 'ToolError:timeout', 'ToolError:timeout'])
      // The pages never arrived: the stuck browser is killed, and the next call launches a new one.
      await untilRelaunchNeeded(quick)
      const bytes = await quick.renderPdf('<p>after the restart</p>', options)
      expect((await PDFDocument.load(bytes)).getPageCount()).toBe(1)
      expect(quick.status()).toMatchObject({ status: 'ok', launches: 2 })
    } finally {
      if (pid !== undefined) {
        try {
          process.kill(pid, 'SIGKILL')
        } catch {}
      }
      await quick.close()
    }
  })

  it('answers 503 unavailable, never an internal error, to calls waiting for a page when it is killed', {
    timeout: 60_000,
  }, async () => {
    const shared = createChromiumBrowser({ pages: 2, log: silentLogger })
    let pid: number | undefined
    try {
      pid = await launchedChromium(() => shared.renderPdf('<p>warm</p>', options))
      process.kill(pid, 'SIGSTOP')
      const shot = { width: 200, height: 100, fullPage: false, format: 'png' as const }
      const calls = [
        shared.renderPdf('<p>one</p>', options),
        shared.renderPdf('<p>two</p>', options),
        shared.renderPdf('<p>three</p>', options),
        shared.screenshot({ html: '<p>four</p>' }, shot),
        shared.screenshot({ url: 'data:text/html,<p>five</p>', checkRequest: async () => {} }, shot),
        shared.renderPage('data:text/html,<p>six</p>', async () => {}),
      ]
      // Two calls hold the pool's pages (one reused, one being created), two wait for a slot.
      while (shared.status().active < 2 || shared.status().queued < 2) {
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      process.kill(pid, 'SIGKILL')
      const codes = await settledCodes(calls)
      for (const code of codes) expect(['ok', 'ToolError:unavailable']).toContain(code)
      expect(codes.slice(0, 2)).toEqual(['ToolError:unavailable', 'ToolError:unavailable'])
      for (const result of await Promise.allSettled(calls)) {
        if (result.status === 'rejected') expect(result.reason.headers).toMatchObject({ 'Retry-After': '1' })
      }
      const bytes = await shared.renderPdf('<p>after the kill</p>', options)
      expect((await PDFDocument.load(bytes)).getPageCount()).toBe(1)
    } finally {
      await shared.close()
    }
  })
})
