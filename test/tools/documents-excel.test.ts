import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import ExcelJS from 'exceljs'
import { strToU8, unzipSync, zipSync } from 'fflate'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type LocalWeb, startLocalWeb } from '../support/local-web'
import { startTestServer, type TestServer } from '../support/server'

async function workbookBytes(build: (workbook: ExcelJS.Workbook) => void): Promise<Uint8Array> {
  const workbook = new ExcelJS.Workbook()
  build(workbook)
  return new Uint8Array(await workbook.xlsx.writeBuffer())
}

/** The workbook's parts rezipped in the order Excel writes them: the sheets before the shared strings. */
function inExcelOrder(zip: Uint8Array): Uint8Array {
  const parts = unzipSync(zip)
  const rank = (name: string) =>
    name.startsWith('xl/worksheets/') ? 1 : name === 'xl/styles.xml' ? 2 : name === 'xl/sharedStrings.xml' ? 3 : 0
  const names = Object.keys(parts).sort((a, b) => rank(a) - rank(b))
  return zipSync(Object.fromEntries(names.map((name) => [name, parts[name] as Uint8Array])))
}

/** A minimal valid workbook zip, to corrupt in controlled ways. */
function minimalXlsx(sheet: string): Uint8Array {
  return zipSync({
    '[Content_Types].xml': strToU8('<Types/>'),
    'xl/workbook.xml': strToU8('<workbook><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>'),
    'xl/worksheets/sheet1.xml': strToU8(sheet),
  })
}

/** Rewrites the uncompressed size an entry declares, in its local header and in the directory. */
function declareSize(zip: Uint8Array, name: string, size: number): Uint8Array {
  const bytes = zip.slice()
  const view = new DataView(bytes.buffer)
  const target = new TextEncoder().encode(name)
  for (let position = 0; position < bytes.length - 46; position++) {
    const signature = view.getUint32(position, true)
    const nameAt = signature === 0x04034b50 ? 30 : signature === 0x02014b50 ? 46 : -1
    if (nameAt < 0) continue
    const nameLength = view.getUint16(position + (signature === 0x04034b50 ? 26 : 28), true)
    const found = bytes.subarray(position + nameAt, position + nameAt + nameLength)
    if (nameLength === target.length && found.every((byte, index) => byte === target[index])) {
      view.setUint32(position + (signature === 0x04034b50 ? 22 : 24), size, true)
    }
  }
  return bytes
}

describe('excel_analyze', () => {
  let server: TestServer
  // Attachments come from a real local server through the real SSRF-checked client.
  const attachments = new Map<string, Uint8Array>()
  let web: LocalWeb
  const put = (path: string, bytes: Uint8Array) =>
    server.storage.put(`tenants/default/workspaces/default/${path}`, bytes)

  beforeAll(async () => {
    web = await startLocalWeb({
      '/a.csv': (request, response) => response.end(attachments.get(request.url ?? '') ?? new Uint8Array()),
    })
    server = await startTestServer({ TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${web.port}` })
  })
  afterAll(async () => {
    await server.stop()
    await web.stop()
  })

  it('describes sheets, headers, types, samples, formulas and merged cells', async () => {
    await put(
      'book.xlsx',
      await workbookBytes((workbook) => {
        const sales = workbook.addWorksheet('Sales')
        sales.addRow(['Region', 'Amount', 'Date', 'Paid', 'Total'])
        sales.addRow(['EMEA', 10, new Date('2024-01-02T00:00:00Z'), true, { formula: 'B2*2', result: 20 }])
        sales.addRow(['APAC', 12.5, new Date('2024-02-03T00:00:00Z'), false, { formula: 'B3*2', result: 25 }])
        sales.addRow(['AMER', 'n/a', new Date('2024-03-04T00:00:00Z'), true, { formula: 'B4*2', result: 0 }])
        sales.getColumn(3).numFmt = 'yyyy-mm-dd'
        sales.mergeCells('A6:C6')
        sales.getCell('A6').value = 'Merged note'
        workbook.addWorksheet('Empty')
      }),
    )
    const result = await server.call('excel_analyze', { path: 'book.xlsx', sample_rows: 2 })
    expect(result.status, JSON.stringify(result.body)).toBe(200)
    expect(result.body.sheet_names).toEqual(['Sales', 'Empty'])
    const [sales, empty] = result.body.sheets
    expect(sales).toMatchObject({
      name: 'Sales',
      row_count: 5,
      column_count: 5,
      headers: ['Region', 'Amount', 'Date', 'Paid', 'Total'],
      formulas: { count: 3, examples: [{ cell: 'E2', formula: 'B2*2' }, { cell: 'E3' }, { cell: 'E4' }] },
      merged_cells: { count: 1, ranges: ['A6:C6'] },
    })
    expect(sales.columns.map((column: { type: string }) => column.type)).toEqual([
      'string',
      'mixed',
      'date',
      'boolean',
      'formula',
    ])
    expect(sales.columns[1].types).toEqual({ integer: 0.333, number: 0.333, string: 0.333 })
    expect(sales.sample_rows).toEqual([
      ['EMEA', 10, '2024-01-02T00:00:00.000Z', true, 20],
      ['APAC', 12.5, '2024-02-03T00:00:00.000Z', false, 25],
    ])
    expect(empty).toMatchObject({ name: 'Empty', row_count: 0, columns: [] })
    const one = await server.call('excel_analyze', { path: 'book.xlsx', sheet: 'Empty' })
    expect(one.status, JSON.stringify(one.body)).toBe(200)
    expect(one.body.sheets.map((sheet: { name: string }) => sheet.name)).toEqual(['Empty'])
    const missing = await server.call('excel_analyze', { path: 'book.xlsx', sheet: 'Nope' })
    expect(missing.status).toBe(404)
    expect(missing.body.hint).toContain('"Sales"')
  })

  it('reads the text of a workbook laid out as Excel writes it (shared strings after the sheets), every time', async () => {
    const bytes = await workbookBytes((workbook) => {
      const sheet = workbook.addWorksheet('Regions')
      sheet.addRow(['region', 'revenue'])
      sheet.addRow(['north', 5])
      sheet.addRow(['south', 7])
    })
    await put('excel-order.xlsx', inExcelOrder(bytes))
    // exceljs's own zip walk lost the shared strings in about one read of three here, more often with
    // temporary files outside /tmp (where a sheet waits for the strings): ten reads, each must have them.
    const previous = process.env.TMPDIR
    const folder = await mkdtemp(join(tmpdir(), 'toolport-tmpdir-'))
    process.env.TMPDIR = folder
    try {
      for (let read = 0; read < 10; read++) {
        const result = await server.call('excel_analyze', { path: 'excel-order.xlsx' })
        expect(result.status, JSON.stringify(result.body)).toBe(200)
        expect(result.body.sheets[0]).toMatchObject({ name: 'Regions', headers: ['region', 'revenue'] })
        expect(JSON.stringify(result.body)).not.toContain('[object Object]')
      }
    } finally {
      if (previous === undefined) delete process.env.TMPDIR
      else process.env.TMPDIR = previous
      await rm(folder, { recursive: true, force: true })
    }
  })

  it('reads CSV with quotes, embedded newlines, another delimiter and formula-looking cells', async () => {
    const csv =
      'name;note;value;when\n"Smith; J";"line one\nline two";1.5;2024-05-01\nDoe;"say ""hi""";2;2024-05-02\nEvil;=HYPERLINK("x");3;soon\n'
    await put('data/people.csv', new TextEncoder().encode(csv))
    const result = await server.call('excel_analyze', { path: 'data/people.csv' })
    expect(result.status, JSON.stringify(result.body)).toBe(200)
    expect(result.body.file).toMatchObject({ format: 'csv', name: 'people.csv' })
    const [sheet] = result.body.sheets
    expect(sheet).toMatchObject({
      name: 'people',
      row_count: 4,
      column_count: 4,
      headers: ['name', 'note', 'value', 'when'],
    })
    expect(sheet.sample_rows[0]).toEqual(['Smith; J', 'line one\nline two', 1.5, '2024-05-01'])
    expect(sheet.columns.map((column: { type: string }) => column.type)).toEqual(['string', 'mixed', 'number', 'mixed'])
    expect(sheet.formulas.count).toBe(1)
  })

  it('reads attachments given as openaiFileIdRefs', async () => {
    attachments.set('/a.csv', new TextEncoder().encode('a,b\n1,2\n'))
    const ref = { name: 'a.csv', id: 'file-1', mime_type: 'text/csv', download_link: `${web.url}/a.csv` }
    const result = await server.call('excel_analyze', { openaiFileIdRefs: [ref] })
    expect(result.body.sheets[0]).toMatchObject({ headers: ['a', 'b'], row_count: 2 })
  })

  it('answers 400 for corrupt, non-spreadsheet and zip-bomb input, and keeps serving', async () => {
    const valid = await workbookBytes((workbook) => workbook.addWorksheet('A').addRow([1, 2]))
    const cases: Record<string, Uint8Array> = {
      'random.xlsx': crypto.getRandomValues(new Uint8Array(4096)),
      'truncated.xlsx': valid.slice(0, Math.floor(valid.length / 2)),
      'image.xlsx': new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
      'legacy.xls': new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0]),
      'not-a-workbook.xlsx': zipSync({ 'hello.txt': strToU8('hi') }),
      // Honest bomb: declares 3 GB for a sheet (the guard refuses before inflating anything).
      'declared-bomb.xlsx': declareSize(
        minimalXlsx(`<worksheet>${'<row/>'.repeat(1000)}</worksheet>`),
        'xl/worksheets/sheet1.xml',
        3_000_000_000,
      ),
      // Lying bomb: 20 MB of XML that declares 1 KB.
      'lying-bomb.xlsx': declareSize(
        minimalXlsx(`<worksheet>${' '.repeat(20_000_000)}</worksheet>`),
        'xl/worksheets/sheet1.xml',
        1024,
      ),
      'garbled-deflate.xlsx': (() => {
        const cells = Array.from({ length: 5000 }, (_, index) => `<c><v>${(index * 7919) % 10007}</v></c>`).join('')
        const corrupt = minimalXlsx(`<worksheet>${cells}</worksheet>`)
        // Overwrite the middle of the sheet's compressed data, leaving every header intact.
        const view = new DataView(corrupt.buffer)
        const directory = view.getUint32(corrupt.length - 22 + 16, true)
        let entry = directory
        for (let index = 0; index < 2; index++) entry += 46 + view.getUint16(entry + 28, true)
        const local = view.getUint32(entry + 42, true)
        const data = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true)
        corrupt.fill(0xff, data + 100, data + 400)
        return corrupt
      })(),
    }
    for (const [name, bytes] of Object.entries(cases)) {
      await put(name, bytes)
      const result = await server.call('excel_analyze', { path: name })
      expect(result.status, `${name}: ${JSON.stringify(result.body)}`).toBe(400)
      expect(result.body.code).toBe('validation')
    }
    const overlapping = zipSync(
      { 'xl/workbook.xml': strToU8('<workbook/>'), 'xl/worksheets/sheet1.xml': strToU8('<worksheet/>') },
      { level: 0 },
    )
    // Point the second directory entry at the first entry's data: the overlapping-entries bomb shape.
    const view = new DataView(overlapping.buffer)
    const directory = view.getUint32(overlapping.length - 22 + 16, true)
    const secondEntry = directory + 46 + view.getUint16(directory + 28, true)
    view.setUint32(secondEntry + 42, 0, true)
    await put('overlap.xlsx', overlapping)
    expect((await server.call('excel_analyze', { path: 'overlap.xlsx' })).body.detail).toMatch(/overlap|disagrees/)
    await put('valid.xlsx', valid)
    expect((await server.call('excel_analyze', { path: 'valid.xlsx' })).status).toBe(200)
  })

  it('keeps the response under 100,000 characters for a wide sheet', async () => {
    const wide = await workbookBytes((workbook) => {
      const sheet = workbook.addWorksheet('Wide')
      sheet.addRow(Array.from({ length: 300 }, (_, index) => `column header number ${index} ${'x'.repeat(150)}`))
      for (let row = 0; row < 60; row++) sheet.addRow(Array.from({ length: 300 }, () => 'y'.repeat(190)))
    })
    await put('wide.xlsx', wide)
    const result = await server.call('excel_analyze', { path: 'wide.xlsx', sample_rows: 50 })
    expect(result.status).toBe(200)
    expect(JSON.stringify(result.body).length).toBeLessThan(100_000)
    expect(result.body.truncated).toBe(true)
    expect(result.body.sheets[0]).toMatchObject({ row_count: 61, column_count: 300 })
  })

  it('streams a 100,000-row sheet within the memory budget', { timeout: 120_000 }, async () => {
    const chunks: Buffer[] = []
    const sink = new PassThrough()
    sink.on('data', (chunk: Buffer) => chunks.push(chunk))
    const writer = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: sink, useSharedStrings: true })
    const sheet = writer.addWorksheet('Big')
    sheet.addRow(['id', 'name', 'amount', 'flag', 'when']).commit()
    for (let index = 1; index <= 100_000; index++) {
      sheet
        .addRow([
          index,
          `customer ${index % 5000}`,
          index * 0.25,
          index % 3 === 0,
          new Date(Date.UTC(2024, 0, 1 + (index % 365))),
        ])
        .commit()
    }
    await sheet.commit()
    await writer.commit()
    await put('big.xlsx', Buffer.concat(chunks))
    global.gc?.()
    const baseline = process.memoryUsage().rss
    let peak = baseline
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss)
    }, 20)
    const started = performance.now()
    const result = await server.call('excel_analyze', { path: 'big.xlsx' })
    clearInterval(sampler)
    expect(result.status, JSON.stringify(result.body).slice(0, 500)).toBe(200)
    expect(result.body.sheets[0]).toMatchObject({
      row_count: 100_001,
      column_count: 5,
      headers: ['id', 'name', 'amount', 'flag', 'when'],
    })
    expect(result.body.sheets[0].columns.map((column: { type: string }) => column.type)).toEqual([
      'integer',
      'string',
      'number',
      'boolean',
      'date',
    ])
    const growthMb = (peak - baseline) / 1024 / 1024
    console.log(
      `excel_analyze 100,000 rows: ${Math.round(performance.now() - started)} ms, RSS +${Math.round(growthMb)} MB`,
    )
    expect(growthMb).toBeLessThan(300)
  })
})
