import { execFileSync } from 'node:child_process'
import { PDFDocument } from 'pdf-lib'
import { afterAll, describe, expect, it } from 'vitest'
import { silentLogger } from '../log'
import { createChromiumBrowser } from './chromium'
import { chromiumArgs } from './extract'
import type { PdfRenderOptions } from './types'

const options: PdfRenderOptions = {
  format: 'A4',
  landscape: false,
  margin: { top: '10mm', right: '10mm', bottom: '10mm', left: '10mm' },
  printBackground: true,
}

/** The Chromium processes this test process started (its direct children). */
function chromiumChildren(): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(process.pid)])
      .toString()
      .split('\n')
      .filter(Boolean)
      .map(Number)
      .filter((pid) => /chrom/i.test(execFileSync('ps', ['-o', 'comm=', '-p', String(pid)]).toString()))
  } catch {
    return []
  }
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
    const quick = createChromiumBrowser({ pages: 1, log: silentLogger, renderTimeoutMs: 1_000 })
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
