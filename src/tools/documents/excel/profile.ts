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

export function createProfile(name: string, sampleRows: number): ProfileBuilder {
  let rows = 0
  let columns = 0
  let headers: (string | null)[] | undefined
  const samples: SampleValue[][] = []
  const counts: Map<ValueType, number>[] = []
  const formulas = { count: 0, examples: [] as { cell: string; formula: string }[] }
  return {
    addRow(rowNumber, cells) {
      const last = cells.findLastIndex((cell) => cell !== undefined)
      if (last < 0) return
      rows++
      columns = Math.max(columns, last + 1)
      // The first row whose values are all text is taken as the header row.
      if (headers === undefined && rows === 1 && cells.every((cell) => cell === undefined || cell.type === 'string')) {
        headers = cells.slice(0, maxColumns).map((cell) => (cell ? shortText(String(cell.sample)) : null))
        return
      }
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
    },
    finish({ merged, dimension }) {
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
