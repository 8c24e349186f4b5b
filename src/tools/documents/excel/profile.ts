/**
 * What excel_analyze learns about one sheet while rows stream past: counts, headers, a few sample
 * rows and per-column value types. Only aggregates and the samples are kept, never the rows, so a
 * 100,000-row sheet costs the same memory as a 10-row one.
 */
export type ValueType = 'integer' | 'number' | 'string' | 'boolean' | 'date' | 'formula' | 'error'
export type SampleValue = string | number | boolean | null

export interface ColumnProfile {
  index: number
  letter: string
  header: string | null
  type: ValueType | 'mixed' | 'empty'
  /** Share of each type among non-empty cells, when the column is mixed. */
  types?: Partial<Record<ValueType, number>>
  non_empty: number
}

export interface SheetProfile {
  name: string
  row_count: number
  column_count: number
  /** The row the headers were read from (1-based, as the sheet numbers it); null: no header row. */
  header_row: number | null
  headers: (string | null)[]
  columns: ColumnProfile[]
  sample_rows: SampleValue[][]
  formulas: { count: number; examples: { cell: string; formula: string }[] }
  merged_cells: { count: number; ranges: string[] }
  dimension?: string
}

export interface Observed {
  type: ValueType
  sample: SampleValue
  formula?: string
}

const maxSampleText = 200
const maxColumns = 200

export function columnLetter(index: number): string {
  let letter = ''
  for (let value = index; value > 0; value = Math.floor((value - 1) / 26))
    letter = String.fromCharCode(65 + ((value - 1) % 26)) + letter
  return letter
}

export function shortText(text: string): string {
  return text.length > maxSampleText ? `${text.slice(0, maxSampleText - 1)}…` : text
}

export interface ProfileBuilder {
  /** cells[i] describes column i + 1; undefined means empty. */
  addRow(rowNumber: number, cells: (Observed | undefined)[]): void
  finish(extra: { merged: { count: number; refs: string[] } | undefined; dimension: string | undefined }): SheetProfile
}

// Rows read before the header row is chosen: title banners sit in the first few rows.
const headerLookahead = 10

type Row = { rowNumber: number; cells: (Observed | undefined)[] }

const widthOf = (cells: readonly (Observed | undefined)[]) => cells.filter((cell) => cell !== undefined).length

/**
 * The header row among the first rows: the first one whose values are all text and that is not a
 * title — a row with a single value where later rows have several (a banner, or a title merged across
 * the columns, whose value sits in its first cell). Rows before it are titles. No such row: no header,
 * and only the leading single-value rows count as titles.
 */
export function chooseHeader(rows: readonly Row[]): { header: number | undefined; titles: number } {
  const widest = Math.max(0, ...rows.map((row) => widthOf(row.cells)))
  const isTitle = (row: Row) => widest > 1 && widthOf(row.cells) === 1
  let titles = 0
  while (titles < rows.length && isTitle(rows[titles] as Row)) titles++
  const candidate = rows[titles]
  const allText = candidate?.cells.every((cell) => cell === undefined || cell.type === 'string') ?? false
  // A lone text row followed by nothing is data, not a header (a one-column list of names has both).
  return { header: candidate && allText && (rows.length > titles + 1 || widest === 1) ? titles : undefined, titles }
}

export function createProfile(name: string, sampleRows: number): ProfileBuilder {
  let rows = 0
  let columns = 0
  let headers: (string | null)[] | undefined
  let headerRow: number | null = null
  const samples: SampleValue[][] = []
  const counts: Map<ValueType, number>[] = []
  const formulas = { count: 0, examples: [] as { cell: string; formula: string }[] }
  let pending: Row[] | undefined = []

  function take(rowNumber: number, cells: (Observed | undefined)[]): void {
    if (samples.length < sampleRows) samples.push(cells.slice(0, maxColumns).map((cell) => cell?.sample ?? null))
    cells.forEach((cell, index) => {
      if (!cell) return
      let tally = counts[index]
      if (!tally) {
        tally = new Map()
        counts[index] = tally
      }
      tally.set(cell.type, (tally.get(cell.type) ?? 0) + 1)
      if (cell.formula !== undefined) {
        formulas.count++
        if (formulas.examples.length < 20)
          formulas.examples.push({ cell: `${columnLetter(index + 1)}${rowNumber}`, formula: shortText(cell.formula) })
      }
    })
  }

  function decide(): void {
    const buffered = pending ?? []
    pending = undefined
    const { header, titles } = chooseHeader(buffered)
    buffered.forEach((row, position) => {
      if (position < titles) return
      if (position === header) {
        headerRow = row.rowNumber
        headers = row.cells.slice(0, maxColumns).map((cell) => (cell ? shortText(String(cell.sample)) : null))
        return
      }
      take(row.rowNumber, row.cells)
    })
  }

  return {
    addRow(rowNumber, cells) {
      const last = cells.findLastIndex((cell) => cell !== undefined)
      if (last < 0) return
      rows++
      columns = Math.max(columns, last + 1)
      if (pending) {
        pending.push({ rowNumber, cells })
        if (pending.length >= headerLookahead) decide()
        return
      }
      take(rowNumber, cells)
    },
    finish({ merged, dimension }) {
      if (pending) decide()
      const profiles: ColumnProfile[] = []
      for (let index = 0; index < Math.min(columns, maxColumns); index++) {
        const tally = counts[index] ?? new Map<ValueType, number>()
        const total = [...tally.values()].reduce((sum, count) => sum + count, 0)
        let kinds = [...tally.keys()]
        // Whole numbers among decimals are still a number column.
        if (kinds.includes('integer') && kinds.includes('number')) kinds = kinds.filter((kind) => kind !== 'integer')
        const type = total === 0 ? 'empty' : kinds.length === 1 ? (kinds[0] as ValueType) : 'mixed'
        profiles.push({
          index: index + 1,
          letter: columnLetter(index + 1),
          header: headers?.[index] ?? null,
          type,
          ...(type === 'mixed'
            ? {
                types: Object.fromEntries(
                  [...tally].map(([kind, count]) => [kind, Math.round((count / total) * 1000) / 1000]),
                ),
              }
            : {}),
          non_empty: total,
        })
      }
      return {
        name,
        row_count: rows,
        column_count: columns,
        header_row: headerRow,
        headers: headers ?? [],
        columns: profiles,
        sample_rows: samples,
        formulas,
        merged_cells: { count: merged?.count ?? 0, ranges: merged?.refs ?? [] },
        ...(dimension ? { dimension } : {}),
      }
    },
  }
}
