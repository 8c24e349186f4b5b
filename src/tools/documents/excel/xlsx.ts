import { Readable } from 'node:stream'
import { ToolError } from '../../../core/errors'
import { createProfile, type Observed, type SheetProfile, shortText } from './profile'
import { WorkbookReader } from './workbook-reader'
import { inspectXlsx } from './zip-guard'

/** .xlsx through exceljs's streaming WorkbookReader, after the zip guard has vetted the archive. */
export function observe(value: unknown): Observed | undefined {
  if (value === null || value === undefined || value === '') return undefined
  if (typeof value === 'number') return { type: Number.isInteger(value) ? 'integer' : 'number', sample: value }
  if (typeof value === 'string') return { type: 'string', sample: shortText(value) }
  if (typeof value === 'boolean') return { type: 'boolean', sample: value }
  if (value instanceof Date) return { type: 'date', sample: Number.isNaN(value.getTime()) ? null : value.toISOString() }
  if (typeof value === 'object') {
    const cell = value as Record<string, unknown>
    if ('formula' in cell || 'sharedFormula' in cell) {
      const result = observe(cell.result)
      return {
        type: 'formula',
        sample: result?.sample ?? null,
        formula: String(cell.formula ?? cell.sharedFormula ?? ''),
      }
    }
    if ('error' in cell) return { type: 'error', sample: String(cell.error) }
    if (Array.isArray(cell.richText)) {
      return {
        type: 'string',
        sample: shortText((cell.richText as { text?: string }[]).map((part) => part.text ?? '').join('')),
      }
    }
    if ('text' in cell) return { type: 'string', sample: shortText(String(cell.text)) }
  }
  return { type: 'string', sample: shortText(String(value)) }
}

export interface WorkbookAnalysis {
  sheets: SheetProfile[]
  /** Every sheet name, including those not analyzed when `sheet` picked one. */
  sheetNames: string[]
}

export async function analyzeXlsx(
  bytes: Uint8Array,
  options: { sheet?: string | undefined; sampleRows: number; signal: AbortSignal },
): Promise<WorkbookAnalysis> {
  const facts = inspectXlsx(bytes)
  const partOf = new Map([...facts.names].map(([part, name]) => [name, part]))
  const sheetNames = [...facts.names.values()]
  if (options.sheet !== undefined && !partOf.has(options.sheet)) {
    throw new ToolError('not_found', `There is no sheet named ${JSON.stringify(options.sheet)}.`, {
      hint: `Use one of: ${sheetNames.map((name) => JSON.stringify(name)).join(', ')}; or leave sheet out to analyze all.`,
      details: { field: 'sheet', sheets: sheetNames },
    })
  }
  const reader = new WorkbookReader(Readable.from([Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)]), {
    sharedStrings: 'cache',
    styles: 'cache',
    hyperlinks: 'ignore',
    worksheets: 'emit',
    entries: 'ignore',
  })
  const sheets: SheetProfile[] = []
  try {
    for await (const worksheet of reader) {
      // The name by the worksheet's own part, from workbook.xml as inspectXlsx read it: exceljs names a
      // sheet streamed before its workbook.xml was parsed "Sheet<n>", which happened under load.
      const streamed = worksheet as unknown as { id: string | number; name: string }
      const part = `xl/worksheets/sheet${streamed.id}.xml`
      const name = facts.names.get(part) ?? streamed.name
      const wanted = options.sheet === undefined || options.sheet === name
      const profile = createProfile(name, options.sampleRows)
      for await (const row of worksheet) {
        if (!wanted) continue
        if (options.signal.aborted) throw options.signal.reason
        const values = row.values as unknown[]
        const cells: (Observed | undefined)[] = []
        for (let column = 1; column < values.length; column++) cells.push(observe(values[column]))
        profile.addRow(row.number, cells)
      }
      if (wanted)
        sheets.push(
          profile.finish({
            merged: part ? facts.merges.get(part) : undefined,
            dimension: part ? facts.dimensions.get(part) : undefined,
          }),
        )
    }
  } catch (error) {
    if (error instanceof ToolError) throw error
    if (options.signal.aborted) throw error
    throw new ToolError('validation', 'The workbook could not be read; it may be corrupt.', {
      hint: 'Open and save the file again in a spreadsheet program, or export it as .csv.',
      details: { field: 'path' },
      cause: error,
    })
  }
  return { sheets, sheetNames: sheetNames.length > 0 ? sheetNames : sheets.map((sheet) => sheet.name) }
}
