// PDF rendering, both rows of the issue in one run:
// - text → PDF: toolport's pdf-lib text renderer against a hand-written pdf-lib script (same font,
//   same greedy wrapping), about 100 pages, target ≤ 1.2×;
// - HTML → PDF: the pdf_generation tool (POST /v1/tools/pdf_generation through the app in-process:
//   auth, validation, the shared browser's locked-down page pool, the page count, storing the file
//   and its link) against a bare puppeteer-core script with the same Chromium build and arguments, a
//   1-page HTML, warm browser, 4 calls at once; per PDF = batch time / 4, target ≤ 1.3×.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fontkit from '@pdf-lib/fontkit'
import { PDFDocument, rgb } from 'pdf-lib'
import { createApp } from '../src/app'
import { chromiumArgs, extractChromium } from '../src/browser/extract'
import { loadConfig } from '../src/config/config'
import { silentLogger } from '../src/core/logger'
import { createNodeServices } from '../src/runtimes/node-services'
import { createMemoryStorage } from '../src/storage/memory'
import { toolNames } from '../src/tools/builtins'
import { fontPath } from '../src/tools/documents/pdf/fonts'
import { renderPlainTextPdf } from '../src/tools/documents/pdf/render-text'
import { note, printTable, summarize, timePair } from './stats'

const iterations = Number(process.env.BENCH_ITERATIONS ?? 10)

// About 100 A4 pages of prose at 10.5 pt (each paragraph wraps onto two lines).
const sentence = 'The quick brown fox jumps over the lazy dog while the committee reviews the budget. '
const text = Array.from({ length: 2400 }, (_, index) => `${index + 1}. ${sentence}`).join('\n')
const box = { width: 595.28, height: 841.89, margin: { top: 56.7, right: 56.7, bottom: 56.7, left: 56.7 } }

/** The baseline: what a hand-written pdf-lib script does, with the same embedded font and greedy wrapping. */
async function barePdfLib(): Promise<number> {
  const document = await PDFDocument.create()
  document.registerFontkit(fontkit)
  const font = await document.embedFont(await readFile(fontPath('regular')), { subset: true })
  const size = 10.5
  const width = box.width - box.margin.left - box.margin.right
  let page = document.addPage([box.width, box.height])
  let y = box.height - box.margin.top
  for (const paragraph of text.split('\n')) {
    let line = ''
    let lineWidth = 0
    const flush = () => {
      if (y - size * 1.45 < box.margin.bottom) {
        page = document.addPage([box.width, box.height])
        y = box.height - box.margin.top
      }
      page.drawText(line, { x: box.margin.left, y: y - size, size, font, color: rgb(0.1, 0.1, 0.1) })
      y -= size * 1.45
      line = ''
      lineWidth = 0
    }
    // Each word is measured once and widths are summed, as an efficient hand-written script would.
    const space = font.widthOfTextAtSize(' ', size)
    for (const word of paragraph.split(' ')) {
      const wordWidth = font.widthOfTextAtSize(word, size)
      if (line && lineWidth + space + wordWidth > width) flush()
      line = line ? `${line} ${word}` : word
      lineWidth += (lineWidth > 0 ? space : 0) + wordWidth
    }
    if (line) flush()
  }
  await document.save()
  return document.getPageCount()
}

let pages = 0
const [toolportText, bareText] = await timePair(
  async () => {
    pages = (await renderPlainTextPdf(text, { title: 'bench', box, maxPages: 2000 })).pages
  },
  barePdfLib,
  iterations,
)
const toolport = summarize(toolportText)
const bare = summarize(bareText)
printTable(`text → PDF, ${pages} pages (pdf-lib + embedded DejaVu)`, [
  { name: 'bare pdf-lib script', stats: bare },
  { name: 'toolport renderPlainTextPdf', stats: toolport, baseline: bare, target: 1.2 },
])
console.log(
  `\ntoolport: ${((pages / toolport.p50) * 1000).toFixed(0)} pages/s; bare: ${((pages / bare.p50) * 1000).toFixed(0)} pages/s`,
)
note(
  `text → PDF: ${iterations} runs each after one discarded warm-up run each, toolport and bare alternating; ${pages} A4 pages of wrapped prose.`,
)

// One A4 page: a heading, a short table and a few paragraphs (the tool reports the page count).
const html = `<!doctype html><html><head><meta charset="utf-8"><style>
body { font-family: sans-serif; font-size: 11pt } table { border-collapse: collapse; width: 100% }
td, th { border: 1px solid #ccc; padding: 4px 8px; text-align: left } th { background: #f0f3f6 }
</style></head><body><h1>Invoice 2026-0042</h1>
<p>Thank you for your order. The items below were shipped on 28 November 2026.</p>
<table><tr><th>Item</th><th>Qty</th><th>Amount</th></tr>
${Array.from({ length: 12 }, (_, index) => `<tr><td>Line item ${index + 1} with a description</td><td>${index + 1}</td><td>€ ${(12 * (index + 1)).toFixed(2)}</td></tr>`).join('')}
</table><p>Payment is due within 30 days. Questions: billing@example.com.</p></body></html>`
const concurrent = 4
// 30 batches: the ratio of two medians moved by ±0.1 between runs of 15 on this shared machine.
const batches = Number(process.env.BENCH_BATCHES ?? 30)
const margin = { top: '20mm', right: '20mm', bottom: '20mm', left: '20mm' }

const dataDir = await mkdtemp(join(tmpdir(), 'toolport-bench-pdf-'))
// The service on Node with as many pooled pages as the bare script has (TOOLPORT_BROWSER_PAGES=4; the
// default of 2 would queue half of each batch, measuring the pool size rather than per-PDF overhead);
// no keys, so auth is off, as on a loopback-only server.
const config = loadConfig(
  {
    TOOLPORT_DATA_DIR: dataDir,
    TOOLPORT_WORK_DIR: join(dataDir, 'work'),
    TOOLPORT_BROWSER_PAGES: String(concurrent),
  },
  { toolNames },
)
const { services } = await createNodeServices(config, {}, silentLogger, { shell: false })
const { app } = createApp({ config, storage: createMemoryStorage(), log: silentLogger, services })
// Each call its own file, as real calls are (the default output name is unique): four concurrent writes
// of one path take turns on its write lock, which would measure lock waits, not per-PDF overhead.
let written = 0
async function toolportCall(): Promise<void> {
  const output_path = `bench/invoice-${written++}.pdf`
  const response = await app.request('/v1/tools/pdf_generation', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ content: html, content_type: 'html', title: 'Invoice', output_path }),
  })
  const result = (await response.json()) as { pages?: number; renderer?: string }
  if (response.status !== 200 || result.pages !== 1 || result.renderer !== 'chromium') {
    throw new Error(`pdf_generation answered ${response.status}: ${JSON.stringify(result)}`)
  }
}

const puppeteer = await import('puppeteer-core')
const browser = await puppeteer.launch({
  executablePath: await extractChromium(),
  args: await chromiumArgs(),
  headless: 'shell',
})
try {
  // What a hand-written script does: one page per concurrent render, opened once and reused.
  const barePages = await Promise.all(Array.from({ length: concurrent }, () => browser.newPage()))
  const bareBatch = () =>
    Promise.all(
      barePages.map(async (page) => {
        await page.setContent(html, { waitUntil: 'load' })
        await page.pdf({ format: 'A4', printBackground: true, margin })
      }),
    )
  const toolportBatch = () => Promise.all(Array.from({ length: concurrent }, toolportCall))
  const [toolportHtml, bareHtml] = await timePair(toolportBatch, bareBatch, batches, { per: concurrent })
  const barePuppeteer = summarize(bareHtml)
  const shared = summarize(toolportHtml)
  printTable(`HTML → PDF, 1 page, warm browser, ${concurrent} at once (time per PDF = batch / ${concurrent})`, [
    { name: `bare puppeteer-core, ${concurrent} reused pages (no lock-down)`, stats: barePuppeteer },
    {
      name: `toolport pdf_generation (app in-process, ${config.browser.pages} pooled locked-down pages)`,
      stats: shared,
      baseline: barePuppeteer,
      target: 1.3,
    },
  ])
  if (shared.p50 / barePuppeteer.p50 > 1.3) {
    note(
      "HTML → PDF MISSED: two Chromium processes share the machine's 2 cores, and the bare side alone moves between runs (18–24 ms per PDF on one machine, 36–45 ms on another), so the ratio moves by ±0.3 between runs. What the call adds to the render is this process's CPU: auth, validation, the locked-down page's request interception and its CDP traffic over a pipe, the page count from the PDF's cross-reference table (a full pdf-lib parse, 5 ms for one page, before 2026-12-02), storing the file with its lock, and the signed link. Each is part of the contract (a page limit, no network for an HTML render, no DevTools port).",
    )
  }
  note(
    `HTML → PDF: ${batches} batches of ${concurrent} concurrent PDFs each after one discarded warm-up batch each (which launches toolport's browser and opens its pages), toolport and bare alternating; both use the @sparticuz/chromium build with the same arguments (two Chromium processes run side by side). toolport's side is the whole tool call: auth, validation, rendering, the page count (read from the PDF's cross-reference table), storing the file (memory storage) and its signed link.`,
  )
} finally {
  await browser.close()
  await services.browser?.close()
  await rm(dataDir, { recursive: true, force: true })
}
