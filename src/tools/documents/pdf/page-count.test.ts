import { PDFDocument, PDFName, PDFString, StandardFonts } from 'pdf-lib'
import { afterAll, describe, expect, it } from 'vitest'
import { createChromiumBrowser } from '../../../browser/chromium'
import { silentLogger } from '../../../core/logger'
import { pageCountFromXref } from './page-count'

const fullCount = async (bytes: Uint8Array) => (await PDFDocument.load(bytes)).getPageCount()

async function pdfLibDocument(pages: number, options: { useObjectStreams: boolean }) {
  const document = await PDFDocument.create()
  const font = await document.embedFont(StandardFonts.Helvetica)
  for (let index = 0; index < pages; index++) {
    document.addPage().drawText(`page ${index + 1}`, { x: 50, y: 700, font, size: 12 })
  }
  return document.save({ useObjectStreams: options.useObjectStreams })
}

const encoder = new TextEncoder()
const concat = (...parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts))

describe('pageCountFromXref', () => {
  const browser = createChromiumBrowser({ pages: 1, log: silentLogger })
  afterAll(() => browser.close())
  const options = {
    format: 'A4',
    landscape: false,
    margin: { top: '10mm', right: '10mm', bottom: '10mm', left: '10mm' },
    printBackground: true,
  } as const

  it('counts what Chromium writes, one page and a page tree of many nodes, as a full parse does', async () => {
    for (const paragraphs of [1, 400]) {
      const html = `<!doctype html><title>t</title>${'<p>A paragraph of the document.</p>'.repeat(paragraphs)}`
      const bytes = await browser.renderPdf(html, options)
      const counted = pageCountFromXref(bytes)
      expect(counted).toBe(await fullCount(bytes))
      expect(counted).toBeGreaterThan(0)
    }
  })

  it('is not fooled by a title or text that spells out a page tree', async () => {
    const fake =
      '>> endobj 1 0 obj << /Type /Pages /Count 1 /Kids [] >> endobj trailer << /Root 1 0 R >> ( ) [ ] /Count 1'
    // The title goes into the Info dictionary and the language into the catalog itself, as literal strings.
    const html = `<!doctype html><html lang="${fake}"><title>${fake}</title><h1>${fake}</h1>${'<p style="break-after: page">x</p>'.repeat(3)}`
    const bytes = await browser.renderPdf(html, options)
    expect(pageCountFromXref(bytes)).toBe(3)
    // A catalog entry whose (escaped) string spells a /Pages key and a nested dictionary's /Count.
    const document = await PDFDocument.load(await pdfLibDocument(4, { useObjectStreams: false }))
    document.catalog.set(PDFName.of('Lang'), PDFString.of(String.raw`x\) /Pages 99 0 R /Count 1 \(`))
    document.catalog.set(PDFName.of('Extra'), document.context.obj({ Pages: 'Fake', Count: 1, Inner: [1, '(]'] }))
    const hostile = await document.save({ useObjectStreams: false })
    expect(new TextDecoder('latin1').decode(hostile)).toContain('/Pages 99 0 R')
    expect(pageCountFromXref(hostile)).toBe(4)
  })

  it('reads a catalog longer than the first window it decodes, and a string that spans its edge', async () => {
    const document = await PDFDocument.load(await pdfLibDocument(6, { useObjectStreams: false }))
    // 5 KB of language tag before /Pages (pdf-lib writes the entries in insertion order), with a
    // fake key inside the string straddling the 2 KB edge: only the whole dictionary tells.
    const filler = `${'x'.repeat(2000)} /Pages 99 0 R /Count 1 ${'y'.repeat(3000)}`
    const pages = document.catalog.get(PDFName.of('Pages'))
    document.catalog.delete(PDFName.of('Pages'))
    document.catalog.set(PDFName.of('Lang'), PDFString.of(filler))
    if (pages) document.catalog.set(PDFName.of('Pages'), pages)
    const long = await document.save({ useObjectStreams: false })
    expect(pageCountFromXref(long)).toBe(6)
  })

  it('counts a classic-table PDF of another writer, and leaves object streams to the full parse', async () => {
    expect(pageCountFromXref(await pdfLibDocument(7, { useObjectStreams: false }))).toBe(7)
    const streams = await pdfLibDocument(7, { useObjectStreams: true })
    expect(pageCountFromXref(streams)).toBeUndefined()
    expect(await fullCount(streams)).toBe(7)
  })

  it('answers undefined, never a wrong count, for updated, truncated, shifted or foreign bytes', async () => {
    const bytes = await pdfLibDocument(5, { useObjectStreams: false })
    // An incremental update (a second table with /Prev) may replace the page tree: the full parse decides.
    const tail = new TextDecoder('latin1').decode(bytes.subarray(bytes.length - 200))
    const previous = /startxref\s+(\d+)/.exec(tail)?.[1]
    const update = encoder.encode(
      `\nxref\n0 1\n0000000000 65535 f \ntrailer\n<< /Size 1 /Prev ${previous} /Root 1 0 R >>\nstartxref\n${bytes.length + 1}\n%%EOF\n`,
    )
    expect(pageCountFromXref(concat(bytes, update))).toBeUndefined()
    for (const cut of [10, bytes.length / 2, bytes.length - 10]) {
      expect(pageCountFromXref(bytes.subarray(0, Math.floor(cut)))).toBeUndefined()
    }
    // Offsets that no longer land on their objects.
    expect(pageCountFromXref(concat(encoder.encode('  '), bytes))).toBeUndefined()
    for (const foreign of ['', '%PDF-1.7\n', 'startxref\n0\n%%EOF', 'xref\n0 1\ntrailer << >>\nstartxref\n0\n%%EOF']) {
      expect(pageCountFromXref(encoder.encode(foreign))).toBeUndefined()
    }
    expect(pageCountFromXref(crypto.getRandomValues(new Uint8Array(4096)))).toBeUndefined()
  })
})
