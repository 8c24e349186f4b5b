import { z } from 'zod'
import { readInputFile } from '../../../downloads/handoff'
import { FileInputFields } from '../../../downloads/schemas'
import { offloaded } from '../../offload'
import { defineTool } from '../../tool'
import { documentTasks } from '../tasks'
import type { SheetProfile } from './profile'

const Sample = z.union([z.string(), z.number(), z.boolean(), z.null()])

const SheetOutput = z.object({
  name: z.string(),
  row_count: z.number().int().describe('Rows holding any value, the header row included.'),
  column_count: z.number().int(),
  dimension: z.string().optional().describe('The used range the file declares, e.g. "A1:F120".'),
  header_row: z
    .number()
    .int()
    .nullable()
    .describe('The row the headers come from (1-based); title banners above it are skipped. null: no header row.'),
  headers: z
    .array(z.string().nullable())
    .describe('The header row: the first row of only text that is not a title; empty when there is none.'),
  columns: z.array(
    z.object({
      index: z.number().int(),
      letter: z.string(),
      header: z.string().nullable(),
      type: z.enum(['integer', 'number', 'string', 'boolean', 'date', 'formula', 'error', 'mixed', 'empty']),
      types: z.record(z.string(), z.number()).optional().describe('Share of each type, for mixed columns.'),
      non_empty: z.number().int(),
    }),
  ),
  sample_rows: z.array(z.array(Sample)).describe('The first data rows (after the header), dates as ISO strings.'),
  formulas: z.object({
    count: z.number().int(),
    examples: z.array(z.object({ cell: z.string(), formula: z.string() })),
  }),
  merged_cells: z.object({ count: z.number().int(), ranges: z.array(z.string()) }),
})

// Room kept for the members around `sheets`.
const responseOverhead = 2_000

/** Shrinks the answer to the response budget: fewer sample rows first, then fewer column details. */
function fitToBudget(sheets: SheetProfile[], budget: number): { sheets: SheetProfile[]; truncated: boolean } {
  let truncated = false
  const size = () => JSON.stringify(sheets).length
  for (let rows = 20; size() > budget && rows >= 0; rows = rows === 0 ? -1 : Math.floor(rows / 2)) {
    truncated = true
    for (const sheet of sheets) sheet.sample_rows = sheet.sample_rows.slice(0, rows)
  }
  for (let columns = 50; size() > budget && columns >= 1; columns = Math.floor(columns / 2)) {
    for (const sheet of sheets) {
      sheet.columns = sheet.columns.slice(0, columns)
      sheet.headers = sheet.headers.slice(0, columns)
      sheet.merged_cells.ranges = sheet.merged_cells.ranges.slice(0, 10)
      sheet.formulas.examples = sheet.formulas.examples.slice(0, 5)
    }
  }
  while (size() > budget && sheets.length > 1) sheets.pop()
  return { sheets, truncated }
}

export const excelAnalyze = defineTool({
  name: 'excel_analyze',
  title: 'Analyze spreadsheet',
  description:
    'Describe an .xlsx or .csv file: sheets with row and column counts, headers, inferred column types, sample rows, formulas and merged cells. Reads a workspace path or an attached file.',
  effect: 'read',
  uses: ['http', 'links', 'offload'],
  input: z.strictObject({
    ...FileInputFields,
    sheet: z.string().min(1).max(100).optional().describe('Analyze only this sheet (by name). Default: all.'),
    sample_rows: z.number().int().min(0).max(50).default(5).describe('Data rows to return per sheet. Default: 5.'),
  }),
  output: z.object({
    file: z.object({ name: z.string(), size: z.number().int(), format: z.enum(['xlsx', 'csv']) }),
    sheet_names: z.array(z.string()),
    sheets: z.array(SheetOutput),
    summary: z.string(),
    truncated: z.boolean().describe('True when samples or column details were cut to keep the response small.'),
  }),
  callTitle: (input) =>
    `Analyze ${input.path ?? input.openaiFileIdRefs?.[0]?.name ?? 'spreadsheet'}${input.sheet ? ` (${input.sheet})` : ''}`,
  async run(input, context) {
    const file = await readInputFile(input, context)
    // Read cell by cell: seconds of CPU for a large sheet, done off the event loop.
    const { format, sheets, sheetNames } = await offloaded(
      context.offload,
      documentTasks,
      'analyze-spreadsheet',
      {
        bytes: file.bytes,
        name: file.name,
        ...(input.sheet === undefined ? {} : { sheet: input.sheet }),
        sampleRows: input.sample_rows,
      },
      { signal: context.signal },
    )
    const fitted = fitToBudget(
      sheets,
      context.limits.maxResponseChars - responseOverhead - JSON.stringify(sheetNames).length,
    )
    const rows = fitted.sheets.reduce((total, sheet) => total + sheet.row_count, 0)
    return {
      file: { name: file.name, size: file.bytes.byteLength, format },
      sheet_names: sheetNames,
      sheets: fitted.sheets,
      summary: `${sheetNames.length} sheet${sheetNames.length === 1 ? '' : 's'}; ${rows.toLocaleString('en-US')} rows analyzed${fitted.truncated ? ' (details shortened)' : ''}.`,
      truncated: fitted.truncated,
    }
  },
})
