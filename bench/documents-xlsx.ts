// 100,000-row xlsx: toolport's styled streaming writer against a bare exceljs WorkbookWriter, each in
// its own child process so that peak RSS (maxRSS) belongs to one variant only.
import { execFileSync } from 'node:child_process'
import { PassThrough } from 'node:stream'
import { fileURLToPath } from 'node:url'
import ExcelJS from 'exceljs'
import { sheetDefaults } from '../src/tools/documents/office/defaults'
import { renderExcel } from '../src/tools/documents/office/excel'
import { resolveTheme } from '../src/tools/documents/office/theme'
import { printTable, summarize } from './stats'

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

async function toolport(): Promise<number> {
  const bytes = await renderExcel(
    'Bench',
    [{ name: 'Data', headers, rows: rows() }],
    resolveTheme({ style: 'corporate' }, sheetDefaults),
  )
  return bytes.byteLength
}

const mode = process.argv[2]
if (mode === 'bare' || mode === 'toolport') {
  const started = performance.now()
  const bytes = await (mode === 'bare' ? bare() : toolport())
  const ms = performance.now() - started
  console.log(JSON.stringify({ ms, bytes, maxRssMb: process.resourceUsage().maxRSS / 1024 }))
} else {
  const iterations = Number(process.env.BENCH_ITERATIONS ?? 3)
  const self = fileURLToPath(import.meta.url)
  const run = (variant: string) => {
    const results = Array.from({ length: iterations }, () =>
      JSON.parse(
        execFileSync(process.execPath, ['--import', 'tsx', self, variant], { encoding: 'utf8' })
          .trim()
          .split('\n')
          .at(-1) as string,
      ),
    )
    return {
      stats: summarize(results.map((result) => result.ms)),
      rss: Math.max(...results.map((result) => result.maxRssMb)),
      bytes: results[0].bytes,
    }
  }
  const baseline = run('bare')
  const ours = run('toolport')
  printTable(`xlsx, ${rowCount.toLocaleString('en-US')} rows × 10 columns (streaming WorkbookWriter)`, [
    { name: 'bare exceljs WorkbookWriter, no styles', stats: baseline.stats },
    { name: 'toolport renderExcel, themed styles', stats: ours.stats, baseline: baseline.stats, target: 2 },
  ])
  console.log(
    `\npeak RSS: bare ${baseline.rss.toFixed(0)} MB, toolport ${ours.rss.toFixed(0)} MB (${(ours.rss / baseline.rss).toFixed(2)}×); file size: bare ${(baseline.bytes / 1e6).toFixed(1)} MB, toolport ${(ours.bytes / 1e6).toFixed(1)} MB`,
  )
}
