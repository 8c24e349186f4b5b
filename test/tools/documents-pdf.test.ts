import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { PDFDocument } from 'pdf-lib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createChromiumBrowser } from '../../src/browser/chromium'
import { silentLogger } from '../../src/core/logger'
import { hasPoppler, makeAndDownload, pdfText, storageFor } from '../support/documents'
import type { S3rverInstance } from '../support/s3rver'
import { startTestServer, type TestServer } from '../support/server'

const pageCount = async (bytes: Uint8Array) => (await PDFDocument.load(bytes)).getPageCount()

const markdown = `# Annual report

Intro with **bold**, *italic* and \`code\`: ✓ Ωμέγα ü €.

## Plan

- first item
- second item
  1. nested one
  2. nested two

| Name | Value |
|---|---|
| alpha | 1 |
| beta | 2 |

> quoted line

\`\`\`
const x = 1
\`\`\`
`

describe.each(['fs', 's3'] as const)('pdf_generation on %s storage', (driver) => {
  let server: TestServer
  let s3rver: S3rverInstance | undefined

  beforeAll(async () => {
    const backing = await storageFor(driver)
    s3rver = backing.s3rver
    server = await startTestServer({}, backing.storage ? { storage: backing.storage } : {})
  })
  afterAll(async () => {
    await server.stop()
    await s3rver?.stop()
  })

  it('renders plain text with pdf-lib, Unicode included, wrapped and paged', async () => {
    const long = `${'word '.repeat(400)}\n`.repeat(30)
    const { bytes, file } = await makeAndDownload(server, 'pdf_generation', {
      content: `Ünïcödé ✓ Ωμέγα € → “quotes”\n\n${long}`,
      content_type: 'text',
      title: 'Plain',
      output_path: 'out/plain.pdf',
      footer_template: 'Page <span class="pageNumber"></span> of <span class="totalPages"></span>',
    })
    expect(file.mime_type).toBe('application/pdf')
    const pages = await pageCount(bytes)
    expect(pages).toBeGreaterThan(5)
    const text = pdfText(bytes)
    if (text !== undefined) {
      expect(text).toContain('Ünïcödé ✓ Ωμέγα € → “quotes”')
      expect(text).toContain(`Page ${pages} of ${pages}`)
    }
  })

  it('renders markdown with Chromium and html with header and footer templates', async () => {
    const result = await server.call('pdf_generation', { content: markdown, content_type: 'markdown', title: 'MD' })
    expect(result.status, JSON.stringify(result.body)).toBe(200)
    expect(result.body).toMatchObject({ renderer: 'chromium', pages: 1 })
    const { bytes } = await makeAndDownload(server, 'pdf_generation', {
      content: '<h1>Invoice</h1><p style="break-after: page">one</p><p>two</p>',
      content_type: 'html',
      page_size: 'Letter',
      orientation: 'landscape',
      margins: { top: 25, bottom: 25, left: 10, right: 10 },
      header_template: '<span class="title"></span>',
      footer_template: 'p. <span class="pageNumber"></span>/<span class="totalPages"></span>',
      title: 'Invoice 7',
    })
    const document = await PDFDocument.load(bytes)
    expect(document.getPageCount()).toBe(2)
    const { width, height } = document.getPage(0).getSize()
    expect([Math.round(width), Math.round(height)]).toEqual([792, 612])
    const text = pdfText(bytes)
    if (text !== undefined) {
      expect(text).toContain('Invoice')
      expect(text).toContain('p. 2/2')
    }
  })

  it('answers 400 at once for an embedded image that would decode to more than 50 megapixels', async () => {
    // The header of a 20,000 × 20,000 PNG (the audit's was 1.5 MB of zeros that decoded to 1.6 GB); its
    // data is cut short here, since the check reads only what the header declares.
    const { deflateSync } = await import('node:zlib')
    const chunk = (type: string, data: Buffer) => {
      const out = Buffer.alloc(12 + data.length)
      out.writeUInt32BE(data.length, 0)
      out.write(type, 4, 'latin1')
      data.copy(out, 8)
      return out
    }
    const header = Buffer.alloc(13)
    header.writeUInt32BE(20_000, 0)
    header.writeUInt32BE(20_000, 4)
    header.set([8, 6, 0, 0, 0], 8)
    const png = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      chunk('IHDR', header),
      chunk('IDAT', deflateSync(Buffer.alloc(80_001))),
      chunk('IEND', Buffer.alloc(0)),
    ])
    const image = `data:image/png;base64,${png.toString('base64')}`
    for (const [content, content_type] of [
      [`# Chart\n\n![chart](${image})`, 'markdown'],
      [`<img src="${image}">`, 'html'],
    ]) {
      const result = await server.call('pdf_generation', { content, content_type })
      expect(result.status, JSON.stringify(result.body).slice(0, 200)).toBe(400)
      expect(result.body).toMatchObject({ code: 'validation', field: 'content' })
    }
  })

  it('wraps a word or URL wider than the page in Markdown, in text and in tables, instead of cutting it', async () => {
    const word = 'abcdefghij'.repeat(50)
    const url = `https://example.com/${'p'.repeat(300)}`
    const { bytes } = await makeAndDownload(server, 'pdf_generation', {
      content: `Start ${word} end.\n\n${url} after\n\n| a | b |\n|---|---|\n| ${word} |  |`,
      content_type: 'markdown',
    })
    const text = pdfText(bytes)
    if (text === undefined) return
    const joined = text.replace(/\s+/g, '')
    expect(joined).toContain(`Start${word}end.`)
    expect(joined).toContain(`${url}after`)
    expect(joined.split(word).length - 1).toBe(2)
  })

  it('answers 400 for unknown fields and bad margins', async () => {
    const bad = await server.call('pdf_generation', { content: 'x', content_type: 'rtf' })
    expect(bad.body).toMatchObject({ status: 400, field: 'content_type' })
    const margins = await server.call('pdf_generation', { content: 'x', margins: { top: -1 } })
    expect(margins.status).toBe(400)
  })

  it('answers 400 at once for HTML nested deeper than a browser builds, and renders 512 levels', async () => {
    const nested = (depth: number) => `${'<div>'.repeat(depth)}deep${'</div>'.repeat(depth)}`
    const deep = await server.call('pdf_generation', { content: nested(100_000), content_type: 'html' })
    expect(deep.status, JSON.stringify(deep.body)).toBe(400)
    expect(deep.body).toMatchObject({ code: 'validation', field: 'content' })
    expect(deep.body.hint).toContain('512')
    const deepest = await server.call('pdf_generation', { content: nested(512), content_type: 'html' })
    expect(deepest.status, JSON.stringify(deepest.body)).toBe(200)
  })
})

describe('pdf_generation without a browser', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({}, { services: { browser: undefined } })
  })
  afterAll(async () => server.stop())

  it('falls back to pdf-lib for markdown, keeping headings, lists and tables', async () => {
    const result = await server.call('pdf_generation', { content: markdown, content_type: 'markdown' })
    expect(result.body).toMatchObject({ renderer: 'pdf-lib', pages: 1 })
    const { bytes } = await makeAndDownload(server, 'pdf_generation', { content: markdown, content_type: 'markdown' })
    const text = pdfText(bytes)
    if (text !== undefined) {
      expect(text).toContain('Annual report')
      expect(text).toMatch(/•\s+first item/)
      expect(text).toMatch(/1\.\s+nested one/)
      expect(text).toMatch(/alpha\s+1/)
      expect(text).toContain('const x = 1')
    }
  })

  it('answers 503 with a hint for html', async () => {
    const result = await server.call('pdf_generation', { content: '<p>x</p>', content_type: 'html' })
    expect(result.status).toBe(503)
    expect(result.body).toMatchObject({ code: 'unavailable' })
    expect(result.body.hint).toContain('markdown')
  })

  it('lays out a 200-page markdown document with automatic page breaks', { timeout: 120_000 }, async () => {
    const section = (index: number) =>
      `## Section ${index}\n\n${'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(12)}\n\n- point a\n- point b\n\n`
    const content = Array.from({ length: 720 }, (_, index) => section(index + 1)).join('')
    const started = performance.now()
    const { bytes, file } = await makeAndDownload(server, 'pdf_generation', {
      content,
      content_type: 'markdown',
      title: 'Long',
    })
    const pages = await pageCount(bytes)
    expect(pages).toBeGreaterThanOrEqual(200)
    expect(file.size).toBeLessThan(5 * 1024 * 1024)
    expect(performance.now() - started).toBeLessThan(60_000)
  })
})

describe('pdf_generation with hostile HTML', () => {
  let server: TestServer
  let bait: Server
  let baitUrl: string
  const hits: string[] = []

  beforeAll(async () => {
    bait = createServer((request, response) => {
      hits.push(request.url ?? '')
      response.end('LEAKED-FROM-LOCAL-SERVER')
    })
    await new Promise<void>((resolve) => bait.listen(0, '127.0.0.1', resolve))
    baitUrl = `http://127.0.0.1:${(bait.address() as AddressInfo).port}`
    server = await startTestServer()
  })
  afterAll(async () => {
    await server.stop()
    await new Promise((resolve) => bait.close(resolve))
  })

  it('runs no script and loads no file, host or network resource', async () => {
    const html = `<!doctype html><html><head>
      <link rel="stylesheet" href="${baitUrl}/style.css">
      <style>@import url("${baitUrl}/import.css"); body { background: url("${baitUrl}/bg.png") }</style>
      <meta http-equiv="refresh" content="0;url=file:///etc/passwd">
      </head><body>
      <h1>Visible heading</h1>
      <script>document.body.innerHTML = 'JS-RAN'; fetch('${baitUrl}/fetch')</script>
      <iframe src="file:///etc/passwd" width="600" height="400"></iframe>
      <object data="file:///etc/passwd" type="text/plain"></object>
      <embed src="file:///etc/passwd">
      <img src="${baitUrl}/pixel.png"><img src="file:///etc/hostname">
      <iframe src="${baitUrl}/frame"></iframe>
      <a href="http://169.254.169.254/latest/meta-data/">metadata link</a>
      <video src="${baitUrl}/video.mp4"></video><audio src="${baitUrl}/a.mp3"></audio>
      </body></html>`
    const { bytes } = await makeAndDownload(server, 'pdf_generation', {
      content: html,
      content_type: 'html',
      header_template: `<img src="${baitUrl}/header.png"><span style="background:url(${baitUrl}/h.png)">H</span><script>x</script>`,
      footer_template: `<iframe src="file:///etc/passwd"></iframe><span class="pageNumber"></span>`,
    })
    expect(await pageCount(bytes)).toBeGreaterThanOrEqual(1)
    const markdownResult = await makeAndDownload(server, 'pdf_generation', {
      content: `# md\n\n<script>document.write('JS-RAN')</script>\n\n<iframe src="file:///etc/passwd"></iframe>\n\n![x](${baitUrl}/md.png) [y](javascript:alert(1))`,
      content_type: 'markdown',
    })
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(hits).toEqual([])
    const raw = Buffer.from(bytes).toString('latin1')
    expect(raw).not.toContain('javascript:')
    for (const text of [pdfText(bytes), pdfText(markdownResult.bytes)]) {
      if (text === undefined) continue
      expect(text).not.toMatch(/root:x?:0:0/)
      expect(text).not.toContain('LEAKED')
    }
    const text = pdfText(bytes)
    if (text !== undefined) {
      expect(text).toContain('Visible heading')
      expect(text).not.toContain('JS-RAN')
    }
    // Raw HTML in Markdown is shown as text, never run: the script's source is visible, its effect is not.
    const markdownText = pdfText(markdownResult.bytes)
    if (markdownText !== undefined) expect(markdownText).toContain("<script>document.write('JS-RAN')</script>")
  })

  it.each(['0;url=https://1.1.1.1/', '1;url=https://1.1.1.1/', '0'])(
    'keeps the given content when the HTML has a meta refresh (content="%s")',
    async (refresh) => {
      const { bytes } = await makeAndDownload(server, 'pdf_generation', {
        content: `<meta http-equiv="refresh" content="${refresh}"><h1>Kept heading</h1><p>Kept paragraph.</p>`,
        content_type: 'html',
      })
      expect(await pageCount(bytes)).toBe(1)
      const text = pdfText(bytes)
      if (text !== undefined) {
        expect(text).toContain('Kept heading')
        expect(text).toContain('Kept paragraph.')
      }
    },
  )

  it.runIf(hasPoppler)('is checked with poppler on this machine', () => {
    expect(hasPoppler).toBe(true)
  })
})

describe('pdf_generation when Chromium cannot start', () => {
  let server: TestServer
  beforeAll(async () => {
    const browser = createChromiumBrowser({ executablePath: '/nonexistent/chromium', pages: 1, log: silentLogger })
    server = await startTestServer({}, { services: { browser } })
  })
  afterAll(async () => server.stop())

  it('renders markdown with pdf-lib, answers 503 for html, and reports the browser in /readyz', async () => {
    const ready = await (await fetch(`${server.url}/readyz`)).json()
    expect(ready.checks.browser).toMatchObject({ status: 'ok', state: 'idle' })
    const markdownResult = await server.call('pdf_generation', {
      content: '# Title\n\n- item',
      content_type: 'markdown',
    })
    expect(markdownResult.body).toMatchObject({ renderer: 'pdf-lib', pages: 1 })
    const html = await server.call('pdf_generation', { content: '<p>x</p>', content_type: 'html' })
    expect(html.status).toBe(503)
    expect(html.headers.get('retry-after')).toBe('5')
    const after = await (await fetch(`${server.url}/readyz`)).json()
    expect(after.status).toBe('ready')
    expect(after.checks.browser).toMatchObject({ status: 'error' })
    expect(JSON.stringify(after)).not.toContain('/nonexistent')
  })
})
