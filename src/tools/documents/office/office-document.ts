import { z } from 'zod'
import { fileOutput, saveOutputFile } from '../../../downloads/handoff'
import { FileOutputFields, OutputPath } from '../../../downloads/schemas'
import { defineTool } from '../../tool'
import { OfficePreview, officeDryRun } from '../dry-runs'
import { Content, contentOf } from './content'
import { Customization } from './customization'
import { sheetDefaults, slideDefaults } from './defaults'
import { resolveTheme } from './theme'

const extensions = { word: 'docx', powerpoint: 'pptx', excel: 'xlsx' } as const
const labels = { word: 'Word document', powerpoint: 'slides', excel: 'workbook' } as const

export const officeDocument = defineTool({
  name: 'office_document',
  title: 'Office document',
  description:
    'Create a Word (.docx), PowerPoint (.pptx) or Excel (.xlsx) file from Markdown or JSON (sections, slides, sheets), styled by customization. Returns a download link.',
  effect: 'write',
  uses: ['http', 'links'],
  input: z.strictObject({
    document_type: z.enum(['word', 'powerpoint', 'excel']).describe('word | powerpoint | excel.'),
    title: z
      .string()
      .min(1)
      .max(200)
      .default('Document')
      .describe('Document title; also the title slide and sheet header.'),
    content: Content.default(''),
    customization: Customization.optional(),
    output_path: OutputPath,
  }),
  output: z.object({
    ...FileOutputFields,
    document_type: z.enum(['word', 'powerpoint', 'excel']),
    summary: z.string().describe('What the document holds, e.g. "7 slides" or "2 sheets, 1,200 rows".'),
  }),
  callTitle: (input) => `Make ${labels[input.document_type]} ${input.output_path ?? input.title}`,
  dryRun: officeDryRun,
  preview: OfficePreview,
  async run(request, context) {
    const input = { ...request, content: contentOf(request.content) }
    const custom = input.customization ?? {}
    let bytes: Uint8Array
    let summary: string
    // The Markdown parser and the renderers load on first use: a cold start serving read_file never pays
    // for marked, docx, pptxgenjs or exceljs.
    const { toBlocks, toSections, toSheets } = await import('./content-blocks')
    if (input.document_type === 'word') {
      const blocks = toBlocks(input.content)
      const { renderWord } = await import('./word')
      bytes = await renderWord(input.title, blocks, resolveTheme(custom))
      summary = `${blocks.length} blocks`
    } else if (input.document_type === 'powerpoint') {
      const sections = toSections(input.content)
      const { renderPowerPoint } = await import('./powerpoint')
      bytes = await renderPowerPoint(input.title, sections, resolveTheme(custom, slideDefaults))
      summary = `${sections.length} sections, title slide included`
    } else {
      const sheets = toSheets(input.content, input.title)
      const { assertSheetsFit } = await import('./excel-limits')
      assertSheetsFit(sheets, typeof input.content !== 'string' && input.content.sheets?.length ? 'sheets' : 'markdown')
      const { renderExcel } = await import('./excel')
      bytes = await renderExcel(input.title, sheets, resolveTheme(custom, sheetDefaults))
      const rows = sheets.reduce((total, sheet) => total + sheet.rows.length, 0)
      summary = `${sheets.length} sheet${sheets.length === 1 ? '' : 's'}, ${rows.toLocaleString('en-US')} rows`
    }
    const file = await saveOutputFile(context, {
      outputPath: input.output_path,
      suggestedName: input.title,
      extension: extensions[input.document_type],
      bytes,
    })
    return { ...fileOutput([file]), document_type: input.document_type, summary }
  },
})
