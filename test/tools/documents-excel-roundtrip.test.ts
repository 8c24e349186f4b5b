import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestServer } from '../support/server'

// excel_analyze reads back every kind of workbook office_document makes with its real headers: the
// title banner (a row merged across the columns) above them is a title, not the header row.

let server: TestServer

beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => {
  await server.stop()
})

interface Made {
  label: string
  request: Record<string, unknown>
  /** Sheet name → the headers it was made with (null: made without a header row). */
  expected: Record<string, string[] | null>
}

const sales = {
  name: 'Q3',
  headers: ['Region', 'Units', 'Revenue'],
  rows: [
    ['North', 120, 1520.5],
    ['South', 80, 990.25],
    ['East', 45, 610],
  ],
}

const workbooks: Made[] = [
  {
    label: 'structured sheets',
    request: {
      title: 'Sales — Q3',
      content: {
        sheets: [
          sales,
          {
            name: 'Staff',
            headers: ['Name', 'Since'],
            rows: [
              ['Ada', 2019],
              ['Lin', 2021],
            ],
          },
        ],
      },
    },
    expected: { Q3: sales.headers, Staff: ['Name', 'Since'] },
  },
  ...(['solid', 'gradient', 'banner'] as const).map((headerStyle) => ({
    label: `header style ${headerStyle}`,
    request: {
      title: 'Sales — Q3',
      content: { sheets: [sales] },
      customization: { header_style: headerStyle, style: 'corporate' },
    },
    expected: { Q3: sales.headers },
  })),
  {
    label: 'a sheet titled like the workbook',
    request: { title: 'Q3', content: { sheets: [sales] } },
    expected: { Q3: sales.headers },
  },
  {
    label: 'a Markdown table',
    request: {
      title: 'Report',
      content:
        '# Revenue\n\n| Region | Units | Revenue |\n| --- | --- | --- |\n| North | 120 | 1520.5 |\n| South | 80 | 990.25 |\n',
    },
    expected: { Revenue: ['Region', 'Units', 'Revenue'] },
  },
  {
    label: 'a sheet without headers',
    request: {
      title: 'Numbers',
      content: {
        sheets: [
          {
            name: 'Raw',
            rows: [
              [1, 2, 3],
              [4, 5, 6],
            ],
          },
        ],
      },
    },
    expected: { Raw: null },
  },
]

describe('excel_analyze of office_document workbooks', () => {
  it.each(workbooks)('$label: the real headers, the row they came from, and typed columns', async (made) => {
    const path = `books/${made.label.replace(/\W+/g, '-')}.xlsx`
    const created = await server.call('office_document', { document_type: 'excel', output_path: path, ...made.request })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    const analyzed = await server.call('excel_analyze', { path })
    expect(analyzed.status, JSON.stringify(analyzed.body)).toBe(200)
    for (const [name, headers] of Object.entries(made.expected)) {
      const sheet = analyzed.body.sheets.find((candidate: { name: string }) => candidate.name === name)
      expect(sheet, `${made.label}: sheet ${name} in ${analyzed.body.sheet_names}`).toBeDefined()
      if (headers === null) {
        expect(sheet.headers).toEqual([])
        expect(sheet.header_row).toBeNull()
        expect(sheet.columns.map((column: { type: string }) => column.type)).toEqual(['integer', 'integer', 'integer'])
        continue
      }
      expect(sheet.headers).toEqual(headers)
      // Row 1 is the title banner, merged across the columns.
      expect(sheet.header_row).toBe(2)
      expect(sheet.columns.map((column: { header: string }) => column.header)).toEqual(headers)
      expect(sheet.columns.some((column: { type: string }) => column.type === 'mixed')).toBe(false)
      if (headers[0] === 'Region') expect(sheet.sample_rows[0]?.[0]).toBe('North')
    }
  })

  it('a hand-made sheet with its header in the first row still reports row 1', async () => {
    await server.call('write_file', { path: 'plain.csv', content: 'id,name\n1,Ada\n2,Lin\n' })
    const analyzed = await server.call('excel_analyze', { path: 'plain.csv' })
    expect(analyzed.body.sheets[0]).toMatchObject({ header_row: 1, headers: ['id', 'name'] })
  })

  it('a file named .xlsx that is not a workbook is a 400 saying what it looks like', async () => {
    await server.call('write_file', { path: 'fake.xlsx', content: 'a,b\n1,2\n' })
    const text = await server.call('excel_analyze', { path: 'fake.xlsx' })
    expect(text.status).toBe(400)
    expect(text.body).toMatchObject({ code: 'validation', field: 'path' })
    expect(text.body.detail).toContain('not an .xlsx workbook')
    expect(text.body.detail).toContain('CSV')
    expect(text.body.hint).toContain('.csv')
  })
})
