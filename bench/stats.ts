export interface Stats {
  p50: number
  p90: number
  min: number
  max: number
  samples: number
}

/**
 * Two runs timed alternately after discarded warm-ups of each (one by default), so that load from other
 * work on this shared machine falls on both alike. Each sample is the run's time divided by `per`
 * (e.g. PDFs in a batch).
 */
export async function timePair(
  first: () => Promise<unknown>,
  second: () => Promise<unknown>,
  count: number,
  options: { per?: number; warmups?: number } = {},
): Promise<[number[], number[]]> {
  for (let index = 0; index < (options.warmups ?? 1); index++) {
    await first()
    await second()
  }
  const samples: [number[], number[]] = [[], []]
  for (let index = 0; index < count; index++) {
    for (const [slot, run] of [first, second].entries()) {
      const started = performance.now()
      await run()
      samples[slot]?.push((performance.now() - started) / (options.per ?? 1))
    }
  }
  return samples
}

export function summarize(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b)
  const at = (quantile: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor(quantile * sorted.length))] ?? Number.NaN
  return {
    p50: at(0.5),
    p90: at(0.9),
    min: sorted[0] ?? Number.NaN,
    max: sorted.at(-1) ?? Number.NaN,
    samples: sorted.length,
  }
}

export interface Row {
  name: string
  stats: Stats
  /** Ratio printed against this row's p50; the target is the largest acceptable ratio. */
  baseline?: Stats
  /**
   * Per-run ratios against the baseline run just before each (runs alternate): their median is the
   * ratio instead of the ratio of the two p50s, so that drift in the shared machine's speed between
   * runs, which moves both runs of a pair alike, does not move the ratio.
   */
  pairedRatios?: number[]
  target?: number
}

/** The ratio a row is judged by: the median of its paired ratios, else its p50 over the baseline's. */
export function ratioOf(row: Row): number | undefined {
  if (row.pairedRatios?.length) return summarize(row.pairedRatios).p50
  return row.baseline ? row.stats.p50 / row.baseline.p50 : undefined
}

/** Every table printed in this process, in order, as markdown lines; run.ts writes them to RESULTS.md. */
export const tables: { title: string; lines: string[] }[] = []
/** Free-form notes (warm-up, missed targets and why) written under the tables. */
export const notes: string[] = []

export function note(text: string): void {
  console.log(text)
  notes.push(text)
}

/** Prints a markdown table and keeps it for RESULTS.md. */
export function printRows(title: string, header: string[], align: ('l' | 'r')[], rows: string[][]): void {
  const lines = [
    `| ${header.join(' | ')} |`,
    `| ${align.map((side) => (side === 'r' ? '---:' : '---')).join(' | ')} |`,
    ...rows.map((cells) => `| ${cells.join(' | ')} |`),
  ]
  console.log(`\n## ${title}\n`)
  for (const line of lines) console.log(line)
  tables.push({ title, lines })
}

export function printTable(title: string, rows: Row[]): void {
  const format = (value: number) => `${value.toFixed(2)} ms`
  printRows(
    title,
    ['what', 'p50', 'p90', 'min', 'max', 'n', 'ratio (p50)', 'target'],
    ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'l'],
    rows.map((row) => {
      const value = ratioOf(row)
      const ratio = value === undefined ? '' : `${value.toFixed(2)}×${row.pairedRatios?.length ? ' (paired)' : ''}`
      const verdict =
        value !== undefined && row.target ? `≤ ${row.target}× ${value <= row.target ? 'met' : 'MISSED'}` : ''
      const { p50, p90, min, max, samples } = row.stats
      return [row.name, format(p50), format(p90), format(min), format(max), String(samples), ratio, verdict]
    }),
  )
}
