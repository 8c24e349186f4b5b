// PDF rendering: toolport's pdf-lib text renderer against bare pdf-lib, and HTML→PDF through the
// shared browser (interception, locked-down pages) against a bare puppeteer-core script, in one run.
import { readFile } from 'node:fs/promises'
import fontkit from '@pdf-lib/fontkit'
import { PDFDocument, rgb } from 'pdf-lib'
import { createChromiumBrowser } from '../src/browser/chromium'
import { chromiumArgs, extractChromium } from '../src/browser/extract'
import { silentLogger } from '../src/log'
import { fontPath } from '../src/tools/documents/pdf/fonts'
import { renderPlainTextPdf } from '../src/tools/documents/pdf/render-text'
import { printTable, summarize } from './stats'

const iterations = Number(process.env.BENCH_ITERATIONS ?? 10)

async function time(run: () => Promise<unknown>, count = iterations): Promise<number[]> {
  await run() // warm-up
  const samples: number[] = []
  for (let index = 0; index < count; index++) {
    const started = performance.now()
    await run()
    samples.push(performance.now() - started)
  }
  return samples
}

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
const toolport = summarize(
  await time(async () => {
    pages = (await renderPlainTextPdf(text, { title: 'bench', box, maxPages: 2000 })).pages
  }),
)
const bare = summarize(await time(barePdfLib))
printTable(`text → PDF, ${pages} pages (pdf-lib + embedded DejaVu)`, [
  { name: 'bare pdf-lib script', stats: bare },
  { name: 'toolport renderPlainTextPdf', stats: toolport, baseline: bare, target: 1.5 },
])
console.log(
  `\ntoolport: ${((pages / toolport.p50) * 1000).toFixed(0)} pages/s; bare: ${((pages / bare.p50) * 1000).toFixed(0)} pages/s`,
)

const html = `<h1>Invoice</h1>${'<p>Line item with a description and an amount € 12.00</p>'.repeat(60)}`
const pdfOptions = {
  format: 'A4' as const,
  landscape: false,
  margin: { top: '20mm', right: '20mm', bottom: '20mm', left: '20mm' },
  printBackground: true,
}
const service = createChromiumBrowser({ pages: 2, log: silentLogger })
const puppeteer = await import('puppeteer-core')
const browser = await puppeteer.launch({
  executablePath: await extractChromium(),
  args: await chromiumArgs(),
  headless: 'shell',
})
try {
  const page = await browser.newPage()
  const barePuppeteer = summarize(
    await time(async () => {
      await page.setContent(html, { waitUntil: 'load' })
      await page.pdf({ format: 'A4', printBackground: true, margin: pdfOptions.margin })
    }, 30),
  )
  const shared = summarize(await time(() => service.renderPdf(html, pdfOptions), 30))
  printTable('HTML → PDF, warm browser (one page reused)', [
    { name: 'bare puppeteer-core (no lock-down)', stats: barePuppeteer },
    { name: 'toolport BrowserService.renderPdf', stats: shared, baseline: barePuppeteer, target: 1.5 },
  ])
} finally {
  await browser.close()
  await service.close()
}
