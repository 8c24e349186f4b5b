import { ToolError } from '../../../core/errors'
import type { SheetData } from './content'

/** Excel's own limits: a workbook past them opens only after Excel "repairs" (drops) what is over. */
export const excelLimits = { rows: 1_048_576, columns: 16_384, cellChars: 32_767 }

/**
 * Refuses sheets Excel cannot hold: more rows than it has (the title row and the header row count
 * too), more columns, or a cell of text past its per-cell limit. JSON sheets (`from: 'sheets'`) are
 * held to the columns and the cell size by their schema, so only their rows are counted here; sheets
 * made from Markdown are bounded only here.
 */
export function assertSheetsFit(sheets: readonly SheetData[], from: 'sheets' | 'markdown'): void {
  for (const [index, sheet] of sheets.entries()) {
    const field = from === 'sheets' ? `content.sheets.${index}.rows` : 'content'
    const name = sheet.name.slice(0, 31)
    const rows = sheet.rows.length + 1 + (sheet.headers ? 1 : 0)
    if (rows > excelLimits.rows) {
      throw tooBig(
        field,
        `The sheet "${name}" would have ${count(rows)} rows (its title row${sheet.headers ? ' and header row' : ''} included); Excel holds ${count(excelLimits.rows)}.`,
        'Split the rows over several sheets (or several workbooks).',
      )
    }
    if (from === 'sheets') continue
    for (const row of [sheet.headers ?? [], ...sheet.rows]) {
      if (row.length > excelLimits.columns) {
        throw tooBig(
          field,
          `A table of the sheet "${name}" has ${count(row.length)} columns; Excel holds ${count(excelLimits.columns)}.`,
          'Send fewer columns, or split the table over several tables.',
        )
      }
      for (const cell of row) {
        if (typeof cell === 'string' && cell.length > excelLimits.cellChars) {
          throw tooBig(
            field,
            `A cell of the sheet "${name}" would hold ${count(cell.length)} characters; Excel holds ${count(excelLimits.cellChars)} per cell.`,
            'Split the longest paragraph or table cell, or send the text as a Word document.',
          )
        }
      }
    }
  }
}

const count = (value: number) => value.toLocaleString('en-US')

function tooBig(field: string, message: string, hint: string): ToolError {
  return new ToolError('validation', message, { hint, details: { field } })
}
