// 100,000-row xlsx: toolport's styled streaming writer (renderExcel, what office_document runs after
// validating its input) against a bare exceljs WorkbookWriter, each run in its own child process so
// that peak RSS (maxRSS) belongs to one variant only. The target is against the unstyled bare
// writer; a second baseline, the same bare writer giving every cell a banded fill, font, borders and
// alignment (exceljs's documented per-cell `cell.style`), shows how much of the gap styling itself costs.
import { execFileSync } from 'node:child_process'
import { PassThrough } from 'node:stream'
import { fileURLToPath } from 'node:url'
import ExcelJS from 'exceljs'
import { sheetDefaults } from '../src/tools/documents/office/defaults'
import { renderExcel } from '../src/tools/documents/office/excel'
import { resolveTheme } from '../src/tools/documents/office/theme'
import { note, printTable, summarize } from './stats'

const rowCount = 100_000
const rows = () =>
  Array.from({ length: rowCount }, (_, index) => [
    index,
    `customer ${index}`,
    index * 1.5,
    index % 2 === 0,
    'EMEA',
    index % 7,
    `note ${index % 100}`,
    index / 3,
    'x',
    index * 2,
  ])
const headers = ['id', 'name', 'amount', 'even', 'region', 'weekday', 'note', 'third', 'flag', 'double']

async function bare(): Promise<number> {
  const sink = new PassThrough()
  let size = 0
  sink.on('data', (chunk: Buffer) => {
    size += chunk.length
  })
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: sink, useSharedStrings: false })
  const sheet = workbook.addWorksheet('Data')
  sheet.addRow(headers).commit()
  for (const row of rows()) sheet.addRow(row).commit()
  await sheet.commit()
  await workbook.commit()
  return size
}

const thin = { style: 'thin' as const, color: { argb: 'FFD0D7DE' } }
const bodyStyle = (fill: string): Partial<ExcelJS.Style> => ({
  font: { name: 'Calibri', size: 11, color: { argb: 'FF1F2328' } },
  fill: { type: 'pattern', pattern: 'solid', fgColor: { argb: fill } },
  border: { top: thin, left: thin, bottom: thin, right: thin },
  alignment: { vertical: 'top', wrapText: false },
})

async function bareStyled(): Promise<number> {
  const sink = new PassThrough()
  let size = 0
  sink.on('data', (chunk: Buffer) => {
    size += chunk.length
  })
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: sink, useStyles: true, useSharedStrings: false })
  const sheet = workbook.addWorksheet('Data')
  const even = bodyStyle('FFFFFFFF')
  const odd = bodyStyle('FFF6F8FA')
  const header = sheet.addRow(headers)
  for (let column = 1; column <= headers.length; column++) {
    header.getCell(column).style = { ...even, font: { ...even.font, bold: true } }
  }
  header.commit()
  for (const [index, values] of rows().entries()) {
    const row = sheet.addRow(values)
    const look = index % 2 === 0 ? even : odd
    for (let column = 1; column <= values.length; column++) row.getCell(column).style = look
    row.commit()
  }
  await sheet.commit()
  await workbook.commit()
  return size
}

async function toolport(): Promise<number> {
  const bytes = await renderExcel(
    'Bench',
    [{ name: 'Data', headers, rows: rows() }],
    resolveTheme({ style: 'corporate' }, sheetDefaults),
  )
  return bytes.byteLength
}

const variants = { bare, 'bare-styled': bareStyled, toolport } as const
const rssLimitMb = 300
const mode = process.argv[2]
if (mode && mode in variants) {
  const started = performance.now()
  const cpuStart = process.cpuUsage()
  const bytes = await variants[mode as keyof typeof variants]()
  const ms = performance.now() - started
  const cpu = process.cpuUsage(cpuStart)
  const cpuMs = (cpu.user + cpu.system) / 1000
  console.log(JSON.stringify({ ms, cpuMs, bytes, maxRssMb: process.resourceUsage().maxRSS / 1024 }))
} else {
  const iterations = Number(process.env.BENCH_ITERATIONS ?? 7)
  const self = fileURLToPath(import.meta.url)
  const once = (variant: string) =>
    JSON.parse(
      execFileSync(process.execPath, ['--import', 'tsx', self, variant], { encoding: 'utf8' })
        .trim()
        .split('\n')
        .at(-1) as string,
    ) as { ms: number; cpuMs: number; bytes: number; maxRssMb: number }
  // Interleaved, so load from other work on the machine falls on every variant alike.
  const results: Record<keyof typeof variants, ReturnType<typeof once>[]> = {
    bare: [],
    'bare-styled': [],
    toolport: [],
  }
  for (let index = 0; index < iterations; index++) {
    for (const variant of Object.keys(variants) as (keyof typeof variants)[]) results[variant].push(once(variant))
  }
  const summary = (variant: keyof typeof variants) => ({
    stats: summarize(results[variant].map((result) => result.ms)),
    cpu: summarize(results[variant].map((result) => result.cpuMs)),
    rss: Math.max(...results[variant].map((result) => result.maxRssMb)),
    bytes: results[variant][0]?.bytes ?? 0,
  })
  // Each iteration runs the three back to back: toolport's run over the bare run of the same iteration.
  const paired = (variant: keyof typeof variants, field: 'ms' | 'cpuMs') =>
    results[variant].map((result, index) => result[field] / (results.bare[index]?.[field] ?? Number.NaN))
  const baseline = summary('bare')
  const styled = summary('bare-styled')
  const ours = summary('toolport')
  printTable(`xlsx, ${rowCount.toLocaleString('en-US')} rows × 10 columns (streaming WorkbookWriter)`, [
    { name: 'bare exceljs WorkbookWriter, no styles', stats: baseline.stats },
    {
      name: 'bare exceljs WorkbookWriter, per-cell banded styles (second baseline)',
      stats: styled.stats,
      baseline: baseline.stats,
      pairedRatios: paired('bare-styled', 'ms'),
    },
    {
      name: 'toolport renderExcel, themed styles',
      stats: ours.stats,
      baseline: baseline.stats,
      pairedRatios: paired('toolport', 'ms'),
      target: 1.2,
    },
  ])
  // CPU time of the render (user + system, this process) is far less disturbed than wall time when
  // other work shares the machine; printed beside it, not instead of it.
  printTable(`xlsx, CPU time of the same runs (user + system)`, [
    { name: 'bare exceljs WorkbookWriter, no styles', stats: baseline.cpu },
    {
      name: 'bare exceljs WorkbookWriter, per-cell banded styles',
      stats: styled.cpu,
      baseline: baseline.cpu,
      pairedRatios: paired('bare-styled', 'cpuMs'),
    },
    {
      name: 'toolport renderExcel, themed styles',
      stats: ours.cpu,
      baseline: baseline.cpu,
      pairedRatios: paired('toolport', 'cpuMs'),
    },
  ])
  const verdict = (mb: number) => `${mb.toFixed(0)} MB (${mb <= rssLimitMb ? 'met' : 'MISSED'})`
  note(
    `xlsx peak RSS (max over ${iterations} runs each, target ≤ ${rssLimitMb} MB): bare ${verdict(baseline.rss)}, bare styled ${verdict(styled.rss)}, toolport ${verdict(ours.rss)}; file size: bare ${(baseline.bytes / 1e6).toFixed(1)} MB, bare styled ${(styled.bytes / 1e6).toFixed(1)} MB, toolport ${(ours.bytes / 1e6).toFixed(1)} MB.`,
  )
  const ratio = summarize(paired('toolport', 'ms')).p50
  if (ratio > 1.2) {
    note(
      `xlsx time MISSED (${ratio.toFixed(2)}× the unstyled writer in wall time, ${summarize(paired('toolport', 'cpuMs')).p50.toFixed(2)}× in CPU time; ${(ours.stats.p50 / styled.stats.p50).toFixed(2)}× the styled bare writer). The styled bare writer alone is ${summarize(paired('bare-styled', 'ms')).p50.toFixed(2)}× the unstyled one: with styles on, exceljs looks up every cell's style (a WeakMap hit per cell), writes an s="N" attribute into each of the 1,000,000 <c> elements and deflates the larger sheet XML. toolport's own per-row work is gone (rows share one style object instead of exceljs's fresh one per row, which re-rendered a style to XML for every row, and the row values are no longer copied), so what remains is the price of a styled workbook in exceljs.`,
    )
  }
}
