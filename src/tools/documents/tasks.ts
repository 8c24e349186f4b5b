import { ToolError } from '../../core/errors'
import type { SheetProfile } from './excel/profile'
import type { TextPdfOptions } from './pdf/render-text'

/**
 * The document tools' CPU-heavy steps as offload tasks (see tools/offload.ts): pdf-lib lays out about a
 * thousand lines a second with an embedded font, and a spreadsheet is read cell by cell. Each library
 * loads on first use, in the worker that runs it.
 */
export const documentTasks = {
  'text-pdf': async ({ text, options }: { text: string; options: TextPdfOptions }) =>
    (await import('./pdf/render-text')).renderPlainTextPdf(text, options),
  'markdown-pdf': async ({ markdown, options }: { markdown: string; options: TextPdfOptions }) => {
    const [{ renderBlocksPdf }, { parseMarkdown }] = await Promise.all([
      import('./pdf/render-text'),
      import('./markdown'),
    ])
    return renderBlocksPdf(parseMarkdown(markdown), options)
  },
  'markdown-html': async ({ markdown, title }: { markdown: string; title: string }) =>
    (await import('./pdf/html')).markdownDocument(markdown, title),
  'pdf-pages': async ({ bytes }: { bytes: Uint8Array }) => {
    const { PDFDocument } = await import('pdf-lib')
    return (await PDFDocument.load(bytes, { updateMetadata: false })).getPageCount()
  },
  'analyze-spreadsheet': async (
    input: { bytes: Uint8Array; name: string; sheet?: string; sampleRows: number },
    signal?: AbortSignal,
  ) => analyzeSpreadsheet(input, signal ?? new AbortController().signal),
}

async function analyzeSpreadsheet(
  input: { bytes: Uint8Array; name: string; sheet?: string; sampleRows: number },
  signal: AbortSignal,
): Promise<{ format: 'xlsx' | 'csv'; sheets: SheetProfile[]; sheetNames: string[] }> {
  // In a worker nothing aborts a task (a cancelled call stops the worker itself); in this thread the call's signal does.
  const options = { sampleRows: input.sampleRows, signal }
  const { bytes } = input
  if (bytes[0] === 0x50 && bytes[1] === 0x4b) {
    const analysis = await (await import('./excel/xlsx')).analyzeXlsx(bytes, { ...options, sheet: input.sheet })
    return { format: 'xlsx', ...analysis }
  }
  // A file named as a workbook that is not one is refused, not read as CSV: the name says what was meant.
  if (/\.xls[xm]$/i.test(input.name)) throw notAWorkbook(input.name, bytes)
  const { analyzeCsv, csvSheetName } = await import('./excel/csv')
  const name = csvSheetName(input.name, input.sheet)
  return { format: 'csv', sheets: [analyzeCsv(bytes, name, options)], sheetNames: [name] }
}

/** What a file that should be a workbook looks like instead, by its first bytes. */
function lookOf(bytes: Uint8Array): string {
  const head = bytes.subarray(0, 8000)
  if (head[0] === 0xd0 && head[1] === 0xcf && head[2] === 0x11 && head[3] === 0xe0) {
    return 'a legacy Excel 97-2003 (.xls) or other OLE file'
  }
  if (new TextDecoder().decode(head.subarray(0, 5)) === '%PDF-') return 'a PDF'
  if (bytes.byteLength === 0) return 'an empty file'
  if (head.includes(0)) return 'binary data'
  const text = new TextDecoder().decode(head)
  if (/^\s*</.test(text)) return 'an HTML or XML text file'
  return /[,;\t]/.test(text) ? 'a text file with delimited values (CSV)' : 'a text file'
}

function notAWorkbook(name: string, bytes: Uint8Array): ToolError {
  const look = lookOf(bytes)
  return new ToolError('validation', `${name} is not an .xlsx workbook: it looks like ${look}.`, {
    hint: look.includes('CSV')
      ? 'Rename it to .csv (write it again under that name) and analyze that, or save it as .xlsx in a spreadsheet program.'
      : 'Send a real .xlsx workbook or a .csv file; save the file in that format first.',
    details: { field: 'path', looks_like: look },
  })
}
