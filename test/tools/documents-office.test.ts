import { Readable } from 'node:stream'
import ExcelJS from 'exceljs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeAndDownload, ooxmlParts, storageFor } from '../support/documents'
import type { S3rverInstance } from '../support/s3rver'
import { startTestServer, type TestServer } from '../support/server'

const markdown = `# Quarterly report

Revenue grew **12%** while costs fell *3%*; details at [our site](https://example.com).

## Highlights

- New customers: 42
- Churn is down
  1. Enterprise
  2. Small business

| Region | Revenue | Growth |
|---|---|---|
| EMEA | 1,200 | 4.5 |
| APAC | 900 | 7 |
| AMER | 2,000 | 3 |

> Quoted remark

# Outlook

More text — ü 日本.
`

const customization = {
  primary_color: '#123456',
  secondary_color: 'ABCDEF',
  accent_color: 'FF8800',
  text_color: '202020',
  background_color: 'FAFAF0',
  font_family: 'Georgia',
  body_font_size: 13,
  header_font_size: 26,
  footer_font_size: 8,
  bold_title: true,
  italic_body: true,
  margin_top: 54,
  margin_bottom: 60,
  margin_left: 40,
  margin_right: 44,
  padding_header: 30,
  padding_content: 10,
  padding_footer: 24,
  line_spacing: 1.5,
  layout: 'twoColumn',
  style: 'modern',
  header_style: 'gradient',
  border_style: 'dashed',
  border_width: 2,
  table_header_bg: '0A0B0C',
  table_row_bg: 'F0F0F0',
  table_alternate_row_bg: 'E0E0FF',
  table_border_color: '998877',
  shadow_effect: true,
}

describe.each(['fs', 's3'] as const)('office_document on %s storage', (driver) => {
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

  it('writes Word with every customization in the XML', async () => {
    const { file, bytes } = await makeAndDownload(server, 'office_document', {
      document_type: 'word',
      title: 'Q3 Report',
      content: markdown,
      customization,
      output_path: 'reports/q3',
    })
    expect(file).toMatchObject({ path: 'reports/q3.docx', name: 'q3.docx' })
    const parts = ooxmlParts(bytes)
    const document = parts['word/document.xml'] as string
    const styles = parts['word/styles.xml'] as string
    expect(document).toContain('Q3 Report')
    expect(document).toContain('Quarterly report')
    expect(document).toContain('<w:background w:color="FAFAF0"/>')
    expect(document).toMatch(
      /<w:pgMar w:top="1080" w:right="880" w:bottom="1200" w:left="800" w:header="600" w:footer="480"/,
    )
    expect(document).toMatch(/<w:cols [^>]*w:num="2"/)
    expect(document).toContain('w:fill="123456"') // title bar
    expect(document).toContain('w:fill="ABCDEF"') // last step of the gradient band
    expect(document).toContain('w:fill="0A0B0C"') // table header
    expect(document).toContain('w:fill="F0F0F0"')
    expect(document).toContain('w:fill="E0E0FF"')
    expect(document).toMatch(/w:val="dashed" w:color="998877" w:sz="16"/)
    expect(document).toContain('w:color="FF8800"') // accent rule under h1, link
    expect(document).toContain('<w:sz w:val="52"/>') // h1 at header_font_size 26
    expect(document).toMatch(/w:val="single" w:color="[0-9A-F]{6}" w:sz="24"/) // shadow edge
    expect(styles).toContain('w:ascii="Georgia"')
    expect(styles).toContain('<w:sz w:val="26"/>')
    expect(styles).toContain('<w:color w:val="202020"/>')
    expect(styles).toContain('<w:i/>')
    expect(styles).toMatch(/w:line="360"/)
    expect(parts['word/numbering.xml']).toContain('w:val="decimal"')
    const footer = parts['word/footer1.xml'] as string
    expect(footer).toContain('PAGE')
    expect(footer).toContain('<w:sz w:val="16"/>') // footer_font_size 8
  })

  it('writes PowerPoint slides with the theme applied', async () => {
    const { bytes } = await makeAndDownload(server, 'office_document', {
      document_type: 'powerpoint',
      title: 'Q3 Deck',
      content: markdown,
      customization: { ...customization, layout: 'grid' },
    })
    const parts = ooxmlParts(bytes)
    const slides = Object.keys(parts).filter((name) => /^ppt\/slides\/slide\d+\.xml$/.test(name))
    // Title slide, "Quarterly report" (text), its table, "Outlook".
    expect(slides.length).toBe(4)
    const all = slides.map((name) => parts[name]).join('\n')
    expect(parts['ppt/slides/slide1.xml']).toContain('Q3 Deck')
    expect(all).toContain('Quarterly report')
    expect(all).toContain('Outlook')
    expect(all).toContain('<a:srgbClr val="123456"/>')
    expect(all).toContain('<a:srgbClr val="ABCDEF"/>')
    expect(all).toContain('<a:srgbClr val="FAFAF0"/>') // background
    expect(all).toContain('<a:srgbClr val="0A0B0C"/>') // table header
    expect(all).toContain('<a:srgbClr val="E0E0FF"/>')
    expect(all).toContain('typeface="Georgia"')
    expect(all).toContain('sz="2600"')
    expect(all).toContain('sz="1300"')
    expect(all).toContain('sz="800"')
    expect(all).toContain('outerShdw')
    expect(all).toContain('<a:prstDash val="dash"/>')
    expect(all).toMatch(/<a:lnSpc><a:spcPct val="150000"\/>/)
    expect(all).toMatch(/i="1"/)
  })

  it('PowerPoint honours every spacing option: margins, paddings, line spacing', async () => {
    // The offset (x, y) and extent (cx, cy) of the shape whose text is `text`, in EMU (914,400 an inch).
    const box = (xml: string, text: string) => {
      const shape = xml.split('<p:sp>').find((part) => part.includes(`<a:t>${text}</a:t>`)) ?? ''
      const [, x, y] = /<a:off x="(\d+)" y="(\d+)"\/>/.exec(shape) ?? []
      const [, cx, cy] = /<a:ext cx="(\d+)" cy="(\d+)"\/>/.exec(shape) ?? []
      return { x: Number(x), y: Number(y), cx: Number(cx), cy: Number(cy) }
    }
    const deck = async (spacing: Record<string, number>) => {
      const { bytes } = await makeAndDownload(server, 'office_document', {
        document_type: 'powerpoint',
        title: 'Deck',
        content: { slides: [{ title: 'Agenda', text: 'Body text here' }] },
        customization: spacing,
      })
      const parts = ooxmlParts(bytes)
      return { cover: parts['ppt/slides/slide1.xml'] as string, slide: parts['ppt/slides/slide2.xml'] as string }
    }
    const inch = 914_400
    const base = await deck({})
    const spaced = await deck({
      margin_top: 72,
      margin_left: 72,
      margin_right: 36,
      margin_bottom: 54,
      padding_header: 72,
      padding_content: 36,
      padding_footer: 72,
      line_spacing: 2,
    })
    // margin_top moves the title down by its own amount (1 inch here against the default 0.4).
    expect(box(spaced.slide, 'Agenda').y - box(base.slide, 'Agenda').y).toBe(Math.round(0.6 * inch))
    expect(box(spaced.slide, 'Agenda').x).toBe(inch)
    // padding_header grows the title line; padding_content pushes the body further below the band.
    expect(box(spaced.slide, 'Agenda').cy).toBeGreaterThan(box(base.slide, 'Agenda').cy)
    expect(box(spaced.slide, 'Body text here').y).toBeGreaterThan(box(base.slide, 'Body text here').y + 0.6 * inch)
    // margin_left and margin_right frame the body and the title slide as well.
    expect(box(spaced.slide, 'Body text here').x).toBe(inch)
    expect(box(spaced.slide, 'Body text here').cx).toBe(10 * inch - inch - inch / 2)
    expect(box(spaced.cover, 'Deck').x).toBe(inch)
    expect(box(spaced.cover, 'Deck').cx).toBe(10 * inch - inch - inch / 2)
    // margin_bottom and padding_footer shorten the body; line_spacing sets the line height.
    const bodyBottom = (xml: string) => box(xml, 'Body text here').y + box(xml, 'Body text here').cy
    expect(bodyBottom(spaced.slide)).toBeLessThan(bodyBottom(base.slide))
    expect(spaced.slide).toMatch(/<a:lnSpc><a:spcPct val="200000"\/>/)
  })

  it('JSON sent as a string in content is used as structured content, or refused with a hint', async () => {
    const sheets = {
      sheets: [
        {
          name: 'Data',
          headers: ['n', 'label'],
          rows: [
            [1, 'one'],
            [2, 'two'],
          ],
        },
      ],
    }
    const { bytes } = await makeAndDownload(server, 'office_document', {
      document_type: 'excel',
      title: 'From a string',
      content: JSON.stringify(sheets),
    })
    const workbook = new ExcelJS.Workbook()
    await workbook.xlsx.load(Buffer.from(bytes) as never)
    const sheet = workbook.getWorksheet('Data') as ExcelJS.Worksheet
    expect(sheet.getRow(2).values).toEqual([undefined, 'n', 'label'])
    expect(sheet.getRow(3).values).toEqual([undefined, 1, 'one'])
    const slides = await makeAndDownload(server, 'office_document', {
      document_type: 'powerpoint',
      content: `  ${JSON.stringify({ slides: [{ title: 'From JSON', bullets: ['a'] }] })}\n`,
    })
    const xml = Object.values(ooxmlParts(slides.bytes)).join('')
    expect(xml).toContain('From JSON')
    expect(xml).not.toContain('&quot;slides&quot;')
    const wrong = await server.call('office_document', {
      document_type: 'word',
      content: JSON.stringify({ paragraphs: ['x'] }),
    })
    expect(wrong.status).toBe(400)
    expect(wrong.body).toMatchObject({ code: 'validation', field: 'content' })
    expect(wrong.body.hint).toContain('JSON object (not a string)')
    const badSheet = await server.call('office_document', {
      document_type: 'excel',
      content: JSON.stringify({ sheets: [{ name: 'x' }] }),
    })
    expect(badSheet).toMatchObject({ status: 400, body: { field: 'content.sheets.0.rows' } })
    const markdownBraces = await server.call('office_document', { document_type: 'word', content: '{not json} text' })
    expect(markdownBraces.status).toBe(200)
  })

  it('PowerPoint draws dotted table borders dotted', async () => {
    const { bytes } = await makeAndDownload(server, 'office_document', {
      document_type: 'powerpoint',
      content: markdown,
      customization: { border_style: 'dotted', layout: 'two_column' },
    })
    const all = Object.entries(ooxmlParts(bytes))
      .filter(([name]) => /^ppt\/slides\/slide\d+\.xml$/.test(name))
      .map(([, xml]) => xml)
      .join('\n')
    expect(all).toContain('<a:tbl>')
    expect(all).toContain('<a:prstDash val="sysDot"/>')
    expect(all).not.toContain('sysDash')
    const dashed = await makeAndDownload(server, 'office_document', {
      document_type: 'powerpoint',
      content: markdown,
      customization: { border_style: 'dashed' },
    })
    expect(Object.values(ooxmlParts(dashed.bytes)).join('\n')).toContain('<a:prstDash val="sysDash"/>')
  })

  it('writes Excel that exceljs reads back with fills, fonts and numbers', async () => {
    const { bytes } = await makeAndDownload(server, 'office_document', {
      document_type: 'excel',
      title: 'Q3 Book',
      content: markdown,
      customization: { ...customization, header_style: 'banner' },
    })
    const workbook = new ExcelJS.Workbook()
    await workbook.xlsx.load(Buffer.from(bytes) as never)
    expect(workbook.worksheets.map((sheet) => sheet.name)).toEqual(['Q3 Book', 'Highlights'])
    const table = workbook.getWorksheet('Highlights') as ExcelJS.Worksheet
    expect(table.getRow(2).values).toEqual([undefined, 'Region', 'Revenue', 'Growth'])
    expect(table.getRow(3).values).toEqual([undefined, 'EMEA', 1200, 4.5])
    const header = table.getCell('A2')
    expect(header.fill).toMatchObject({ fgColor: { argb: 'FF0A0B0C' } })
    expect(table.getCell('A3').fill).toMatchObject({ fgColor: { argb: 'FFF0F0F0' } })
    expect(table.getCell('A4').fill).toMatchObject({ fgColor: { argb: 'FFE0E0FF' } })
    expect(table.getCell('A3').font).toMatchObject({
      name: 'Georgia',
      size: 13,
      italic: true,
      color: { argb: 'FF202020' },
    })
    expect(table.getCell('A3').border?.top).toMatchObject({ style: 'mediumDashed', color: { argb: 'FF998877' } })
    const title = table.getCell('A1')
    expect(title.fill).toMatchObject({ fgColor: { argb: 'FF123456' } })
    expect(title.font).toMatchObject({ size: 26, bold: true })
    expect(title.border?.bottom).toMatchObject({ style: 'thick', color: { argb: 'FFFF8800' } })
    expect(table.pageSetup.margins).toMatchObject({ top: 0.75, left: 40 / 72 })
    expect(table.headerFooter.oddFooter).toContain('&8')
    expect(table.properties.tabColor).toMatchObject({ argb: 'FFFF8800' })
    expect(ooxmlParts(bytes)['xl/worksheets/sheet2.xml']).toContain('<mergeCell ref="A1:C1"/>')
  })

  it('takes structured JSON: sections, slides and sheets', async () => {
    const word = await makeAndDownload(server, 'office_document', {
      document_type: 'word',
      content: {
        sections: [
          {
            heading: 'Intro',
            text: 'Hello *world*',
            bullets: ['a', 'b'],
            table: { headers: ['x'], rows: [[1], [null]] },
          },
        ],
      },
    })
    expect(ooxmlParts(word.bytes)['word/document.xml']).toContain('Intro')
    const deck = await makeAndDownload(server, 'office_document', {
      document_type: 'powerpoint',
      content: {
        slides: [
          { title: 'One', bullets: ['first'], notes: 'say this' },
          { title: 'Two', subtitle: 's' },
        ],
      },
    })
    const deckParts = ooxmlParts(deck.bytes)
    expect(Object.keys(deckParts).filter((name) => /^ppt\/slides\/slide\d+\.xml$/.test(name))).toHaveLength(3)
    expect(
      Object.entries(deckParts).some(([name, xml]) => name.includes('notesSlide') && xml.includes('say this')),
    ).toBe(true)
    const book = await makeAndDownload(server, 'office_document', {
      document_type: 'excel',
      content: {
        sheets: [
          {
            name: 'Data/2024?',
            headers: ['n', 'ok'],
            rows: [
              [1, true],
              [2, false],
            ],
            column_widths: [10, 20],
          },
        ],
      },
    })
    const workbook = new ExcelJS.Workbook()
    await workbook.xlsx.load(Buffer.from(book.bytes) as never)
    const sheet = workbook.worksheets[0] as ExcelJS.Worksheet
    expect(sheet.name).toBe('Data 2024')
    expect(sheet.getRow(4).values).toEqual([undefined, 2, false])
    expect(sheet.getColumn(2).width).toBe(20)
  })

  it('refuses unknown options, bad colors and unknown content keys with 400 naming them', async () => {
    const unknown = await server.call('office_document', {
      document_type: 'word',
      content: 'x',
      customization: { primaryColor: '112233', glow: true },
    })
    expect(unknown.status).toBe(400)
    expect(unknown.body.detail).toContain('primaryColor')
    expect(unknown.body.detail).toContain('glow')
    const color = await server.call('office_document', {
      document_type: 'word',
      customization: { accent_color: 'red' },
    })
    expect(color.status).toBe(400)
    expect(color.body.field).toBe('customization.accent_color')
    const content = await server.call('office_document', { document_type: 'excel', content: { tabs: [] } })
    expect(content.status).toBe(400)
    const kind = await server.call('office_document', { document_type: 'visio' })
    expect(kind.body.field).toBe('document_type')
  })
})

describe('office_document with a 100,000-row sheet', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer()
  })
  afterAll(async () => server.stop())

  it('streams it out and exceljs streams it back', { timeout: 120_000 }, async () => {
    const rows = Array.from({ length: 100_000 }, (_, index) => [index, `name ${index}`, index * 1.5, index % 2 === 0])
    const { bytes } = await makeAndDownload(server, 'office_document', {
      document_type: 'excel',
      title: 'Big',
      content: { sheets: [{ name: 'Big', headers: ['id', 'name', 'value', 'even'], rows }] },
    })
    let count = 0
    let last: unknown
    const reader = new ExcelJS.stream.xlsx.WorkbookReader(Readable.from([Buffer.from(bytes)]), {})
    for await (const sheet of reader) {
      for await (const row of sheet) {
        count++
        last = row.values
      }
    }
    expect(count).toBe(100_002) // title, header, data
    expect(last).toEqual([undefined, 99_999, 'name 99999', 149_998.5, false])
  })

  it("refuses sheets past Excel's own limits with 400 naming the field, from JSON and from Markdown", async () => {
    const rows = await server.call('office_document', {
      document_type: 'excel',
      content: { sheets: [{ name: 'S', headers: ['h'], rows: Array.from({ length: 1_048_575 }, () => [1]) }] },
    })
    expect(rows.status, JSON.stringify(rows.body).slice(0, 300)).toBe(400)
    expect(rows.body).toMatchObject({ code: 'validation', field: 'content.sheets.0.rows' })
    expect(rows.body.detail).toContain('1,048,577 rows')
    const wide = `|${'c|'.repeat(20_000)}\n|${'-|'.repeat(20_000)}\n|${'1|'.repeat(20_000)}`
    const columns = await server.call('office_document', { document_type: 'excel', content: wide })
    expect(columns.status, JSON.stringify(columns.body).slice(0, 300)).toBe(400)
    expect(columns.body).toMatchObject({ field: 'content' })
    expect(columns.body.detail).toContain('16,384')
    const long = await server.call('office_document', {
      document_type: 'excel',
      content: `# T\n\n${'x'.repeat(40_000)}`,
    })
    expect(long.status, JSON.stringify(long.body).slice(0, 300)).toBe(400)
    expect(long.body.detail).toContain('32,767')
    // The same text is a fine Word document.
    expect((await server.call('office_document', { document_type: 'word', content: 'x'.repeat(40_000) })).status).toBe(
      200,
    )
  })

  it('cuts a sheet name at 31 characters without splitting an emoji', async () => {
    const { bytes } = await makeAndDownload(server, 'office_document', {
      document_type: 'excel',
      title: 'Names',
      content: { sheets: [{ name: `${'a'.repeat(30)}😀b`, rows: [[1]] }] },
    })
    const workbook = new ExcelJS.Workbook()
    await workbook.xlsx.load(Buffer.from(bytes) as never)
    expect(workbook.worksheets[0]?.name).toBe('a'.repeat(30))
  })
})
