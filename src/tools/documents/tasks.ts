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
  const { analyzeCsv, csvSheetName } = await import('./excel/csv')
  const name = csvSheetName(input.name, input.sheet)
  return { format: 'csv', sheets: [analyzeCsv(bytes, name, options)], sheetNames: [name] }
}
