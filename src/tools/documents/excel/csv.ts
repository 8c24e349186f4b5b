import { ToolError } from '../../../core/errors'
import { createProfile, type Observed, type SheetProfile, shortText } from './profile'

/**
 * CSV (RFC 4180 quoting; delimiter , ; tab or | guessed from the first line). Values are typed the
 * way a spreadsheet would read them; a cell starting with "=" is what Excel would run as a formula,
 * so it is reported as one (which also flags CSV injection).
 */
const integer = /^[-+]?\d{1,15}$/
const decimal = /^[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?$/
const isoDate = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[-+]\d{2}:?\d{2})?)?$/

function observeText(text: string): Observed | undefined {
  const value = text.trim()
  if (value === '') return undefined
  if (integer.test(value)) return { type: 'integer', sample: Number(value) }
  if (decimal.test(value)) return { type: 'number', sample: Number(value) }
  if (/^(true|false)$/i.test(value)) return { type: 'boolean', sample: value.toLowerCase() === 'true' }
  if (isoDate.test(value) && !Number.isNaN(Date.parse(value))) return { type: 'date', sample: value }
  if (value.startsWith('=') && value.length > 1)
    return { type: 'formula', sample: shortText(value), formula: shortText(value.slice(1)) }
  return { type: 'string', sample: shortText(text) }
}

function guessDelimiter(text: string): string {
  const firstLine = text.slice(0, text.search(/\r?\n|$/))
  let best = ','
  let bestCount = 0
  for (const candidate of [',', ';', '\t', '|']) {
    const count = firstLine.split(candidate).length - 1
    if (count > bestCount) {
      best = candidate
      bestCount = count
    }
  }
  return best
}

/** Yields one array of fields per record; quoted fields may span lines. */
function* records(text: string, delimiter: string): Generator<string[]> {
  let field = ''
  let row: string[] = []
  let quoted = false
  let position = 0
  const length = text.length
  while (position < length) {
    const character = text[position] as string
    if (quoted) {
      if (character === '"') {
        if (text[position + 1] === '"') {
          field += '"'
          position++
        } else quoted = false
      } else field += character
    } else if (character === '"' && field === '') quoted = true
    else if (character === delimiter) {
      row.push(field)
      field = ''
    } else if (character === '\n' || character === '\r') {
      if (character === '\r' && text[position + 1] === '\n') position++
      row.push(field)
      yield row
      row = []
      field = ''
    } else field += character
    position++
  }
  if (quoted)
    throw new ToolError('validation', 'The CSV file ends inside a quoted field.', {
      hint: 'Check the file for an unbalanced double quote.',
      details: { field: 'path' },
    })
  if (field !== '' || row.length > 0) {
    row.push(field)
    yield row
  }
}

export function decodeCsv(bytes: Uint8Array): string {
  if (bytes.subarray(0, 8000).includes(0)) {
    throw new ToolError('validation', 'The file is neither an .xlsx workbook nor a text CSV file.', {
      hint: 'excel_analyze reads .xlsx and .csv; legacy .xls and other binary files must be saved as .xlsx or .csv first.',
      details: { field: 'path' },
    })
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes).replace(/^\ufeff/, '')
  } catch {
    // Not UTF-8: spreadsheet programs often export Windows-1252.
    return new TextDecoder('windows-1252').decode(bytes)
  }
}

/** A CSV file's one sheet is named after the file; asking for another is a not_found. */
export function csvSheetName(fileName: string, sheet: string | undefined): string {
  const name = fileName.replace(/\.[^.]*$/, '') || 'Sheet1'
  if (sheet !== undefined && sheet !== name) {
    throw new ToolError('not_found', `A CSV file has one sheet, ${JSON.stringify(name)}.`, {
      hint: 'Leave sheet out for CSV files.',
      details: { field: 'sheet' },
    })
  }
  return name
}

export function analyzeCsv(
  bytes: Uint8Array,
  name: string,
  options: { sampleRows: number; signal: AbortSignal },
): SheetProfile {
  const text = decodeCsv(bytes)
  const profile = createProfile(name, options.sampleRows)
  let rowNumber = 0
  for (const fields of records(text, guessDelimiter(text))) {
    rowNumber++
    if (rowNumber % 10_000 === 0 && options.signal.aborted) throw options.signal.reason
    profile.addRow(rowNumber, fields.map(observeText))
  }
  return profile.finish({ merged: undefined, dimension: undefined })
}
