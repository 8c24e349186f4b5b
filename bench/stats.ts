export interface Stats {
  p50: number
  p90: number
  min: number
  max: number
  samples: number
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
  target?: number
}

export function printTable(title: string, rows: Row[]): void {
  const format = (value: number) => `${value.toFixed(2)} ms`
  console.log(`\n## ${title}\n`)
  console.log('| what | p50 | p90 | min | max | n | ratio (p50) | target |')
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |')
  for (const row of rows) {
    const ratio = row.baseline ? `${(row.stats.p50 / row.baseline.p50).toFixed(2)}×` : ''
    const verdict =
      row.baseline && row.target
        ? `≤ ${row.target}× ${row.stats.p50 / row.baseline.p50 <= row.target ? 'met' : 'MISSED'}`
        : ''
    const { p50, p90, min, max, samples } = row.stats
    console.log(
      `| ${row.name} | ${format(p50)} | ${format(p90)} | ${format(min)} | ${format(max)} | ${samples} | ${ratio} | ${verdict} |`,
    )
  }
}
