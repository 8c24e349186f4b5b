import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hasPoppler, makeAndDownload } from '../support/documents'
import { startTestServer, type TestServer } from '../support/server'

/**
 * Renders one page of each kind of document to an image and checks that it looks right: the themed
 * colors are really on the page. With TOOLPORT_UPDATE_IMAGES=1 the PNGs go to docs/images/ (docs/tools.md shows them).
 * PDFs are rasterized by poppler's pdftoppm; Office files need LibreOffice (soffice) and are skipped
 * where it is not installed.
 */
const hasSoffice = (() => {
  try {
    execFileSync('soffice', ['--version'], { stdio: 'ignore', timeout: 30_000 })
    return true
  } catch {
    return false
  }
})()

/** Pixels within `tolerance` of the color, in a binary PPM (P6) image. */
function countColor(ppm: Buffer, hex: string, tolerance = 24): number {
  const header = ppm.toString('latin1', 0, 64).match(/^P6\s+(\d+)\s+(\d+)\s+(\d+)\s/)
  if (!header) throw new Error('not a PPM image')
  const [r, g, b] = [0, 2, 4].map((offset) => Number.parseInt(hex.slice(offset, offset + 2), 16)) as [
    number,
    number,
    number,
  ]
  let count = 0
  for (let position = header[0].length; position + 2 < ppm.length; position += 3) {
    if (
      Math.abs((ppm[position] as number) - r) <= tolerance &&
      Math.abs((ppm[position + 1] as number) - g) <= tolerance &&
      Math.abs((ppm[position + 2] as number) - b) <= tolerance
    )
      count++
  }
  return count
}

describe.runIf(hasPoppler)('rendered pages', () => {
  let server: TestServer
  let work: string
  const output = process.env.TOOLPORT_UPDATE_IMAGES === '1' ? join(process.cwd(), 'docs', 'images') : undefined

  beforeAll(async () => {
    server = await startTestServer()
    work = await mkdtemp(join(tmpdir(), 'toolport-render-'))
    if (output) await mkdir(output, { recursive: true })
  })
  afterAll(async () => {
    await server.stop()
    await rm(work, { recursive: true, force: true })
  })

  /** One page of a PDF as a PNG (kept when updating docs) and a PPM (for the pixel checks). */
  async function rasterize(pdf: Uint8Array, name: string, page = 1): Promise<Buffer> {
    const source = join(work, `${name}.pdf`)
    await writeFile(source, pdf)
    const pages = ['-f', String(page), '-l', String(page)]
    execFileSync('pdftoppm', ['-r', '60', ...pages, '-singlefile', source, join(work, name)])
    execFileSync('pdftoppm', ['-r', '60', ...pages, '-singlefile', '-png', source, join(output ?? work, name)])
    return readFile(join(work, `${name}.ppm`))
  }

  async function officeToPdf(bytes: Uint8Array, name: string, extension: string): Promise<Uint8Array> {
    const source = join(work, `${name}.${extension}`)
    await writeFile(source, bytes)
    execFileSync(
      'soffice',
      [
        '--headless',
        `-env:UserInstallation=file://${join(work, 'lo-profile')}`,
        '--convert-to',
        'pdf',
        '--outdir',
        work,
        source,
      ],
      { stdio: 'ignore', timeout: 120_000 },
    )
    return readFile(join(work, `${name}.pdf`))
  }

  const report = `# Quarterly report\n\nRevenue grew **12%** while costs fell *3%*.\n\n## Highlights\n\n- 42 new customers\n- Churn is down\n  1. Enterprise\n  2. Small business\n\n| Region | Revenue | Growth |\n|---|---|---|\n| EMEA | 1,200 | 4.5 |\n| APAC | 900 | 7 |\n| AMER | 2,000 | 3 |\n\n> Cash is king.\n\n# Outlook\n\nWe expect steady growth — ✓ Ωμέγα ü.\n`
  const customization = { style: 'colorful', header_style: 'gradient', shadow_effect: true, primary_color: '7C3AED' }

  it('html through Chromium', { timeout: 60_000 }, async () => {
    const html = `<html><body style="font-family: sans-serif"><div style="background:#1F3864;color:white;padding:16px"><h1>Invoice 2024-117</h1></div><table style="width:100%;border-collapse:collapse;margin-top:12px"><tr style="background:#E7EEF8"><th align="left">Item</th><th align="right">Amount</th></tr><tr><td>Consulting</td><td align="right">€ 1,200.00</td></tr><tr><td>Support</td><td align="right">€ 300.00</td></tr></table></body></html>`
    const { bytes } = await makeAndDownload(server, 'pdf_generation', {
      content: html,
      content_type: 'html',
      footer_template: 'Page <span class="pageNumber"></span>',
    })
    expect(countColor(await rasterize(bytes, 'pdf-html'), '1F3864')).toBeGreaterThan(5_000)
  })

  it('markdown through pdf-lib', { timeout: 60_000 }, async () => {
    const bare = await startTestServer({}, { services: { browser: undefined } })
    try {
      const { bytes } = await makeAndDownload(bare, 'pdf_generation', { content: report, content_type: 'markdown' })
      const ppm = await rasterize(bytes, 'pdf-markdown')
      expect(countColor(ppm, '1F3864', 40)).toBeGreaterThan(100) // headings and the table header
    } finally {
      await bare.stop()
    }
  })

  const regions = {
    sheets: [
      {
        name: 'Regions',
        headers: ['Region', 'Revenue', 'Growth %', 'Target met'],
        rows: [
          ['EMEA', 1200, 4.5, true],
          ['APAC', 900, 7, true],
          ['AMER', 2000, 3, false],
          ['LATAM', 450, 11.2, true],
          ['Africa', 210, 9.8, false],
        ],
      },
    ],
  }
  // Slide 2 is the first content slide (1 is the title slide).
  for (const [kind, extension, content, page, custom] of [
    ['word', 'docx', report, 1, customization],
    ['powerpoint', 'pptx', report, 2, customization],
    ['excel', 'xlsx', regions, 1, { ...customization, header_style: 'banner' }],
  ] as const) {
    it.runIf(hasSoffice)(`${kind} through LibreOffice`, { timeout: 180_000 }, async () => {
      const { bytes } = await makeAndDownload(server, 'office_document', {
        document_type: kind,
        title: 'Quarterly report',
        content,
        customization: custom,
      })
      const ppm = await rasterize(await officeToPdf(bytes, kind, extension), kind, page)
      expect(countColor(ppm, '7C3AED')).toBeGreaterThan(500)
    })
  }
})
