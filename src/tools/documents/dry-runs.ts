import { z } from 'zod'
import { ToolError } from '../../core/errors'
import { previewOutputFile } from '../../downloads/handoff'
import { OutputPreviewSchema } from '../../downloads/schemas'
import type { DryRunContext } from '../tool'
import { type Content, contentOf } from './office/content'
import { assertPrintableArea } from './pdf/page-setup'

// The document tools' dry runs: the checks the call makes before it renders (content, margins, the
// output path), where the file would go and whether it would replace one, and the page setup.

export const PdfPreview = z.object({
  output: OutputPreviewSchema,
  page: z.object({
    size: z.string(),
    orientation: z.string(),
    margins_mm: z.object({ top: z.number(), right: z.number(), bottom: z.number(), left: z.number() }),
    header: z.boolean(),
    footer: z.boolean(),
  }),
  renderer: z.enum(['chromium', 'pdf-lib']),
  content: z.object({ type: z.string(), chars: z.number().int() }),
})

type PdfInput = Parameters<typeof assertPrintableArea>[0] & {
  content: string
  content_type: 'html' | 'markdown' | 'text'
  title: string
  output_path?: string | undefined
  header_template?: string | undefined
  footer_template?: string | undefined
}

export async function pdfDryRun(request: PdfInput, context: DryRunContext<'browser' | 'links'>) {
  assertPrintableArea(request)
  const renderer = request.content_type === 'html' || (request.content_type === 'markdown' && context.browser)
  if (request.content_type === 'html' && !context.browser) {
    throw new ToolError('unavailable', 'HTML to PDF needs a browser, and this deployment has none.', {
      notOffered: true,
      hint: 'Send the document as content_type "markdown" or "text", which render without a browser.',
    })
  }
  return {
    output: await previewOutputFile(
      { workspace: context.workspace, limits: context.limits, links: context.links },
      { outputPath: request.output_path, suggestedName: request.title, extension: 'pdf' },
    ),
    page: {
      size: request.page_size,
      orientation: request.orientation,
      margins_mm: request.margins,
      header: request.header_template !== undefined,
      footer: request.footer_template !== undefined,
    },
    renderer: renderer ? ('chromium' as const) : ('pdf-lib' as const),
    content: { type: request.content_type, chars: request.content.length },
  }
}

export const OfficePreview = z.object({
  output: OutputPreviewSchema,
  document_type: z.enum(['word', 'powerpoint', 'excel']),
  layout: z
    .object({
      blocks: z.number().int().optional(),
      slides: z.number().int().optional().describe('Content slides, after the title slide.'),
      sheets: z.array(z.object({ name: z.string(), rows: z.number().int() })).optional(),
    })
    .describe('What the document would hold.'),
})

interface OfficeInput {
  document_type: 'word' | 'powerpoint' | 'excel'
  title: string
  content: Content
  output_path?: string | undefined
}

const extensions = { word: 'docx', powerpoint: 'pptx', excel: 'xlsx' } as const

export async function officeDryRun(request: OfficeInput, context: DryRunContext<'links'>) {
  const input = { ...request, content: contentOf(request.content) }
  const { toBlocks, toSections, toSheets } = await import('./office/content-blocks')
  // The content is read as the renderer reads it, so content it cannot use is refused here too.
  const layout =
    input.document_type === 'word'
      ? { blocks: toBlocks(input.content).length }
      : input.document_type === 'powerpoint'
        ? { slides: toSections(input.content).length }
        : {
            sheets: toSheets(input.content, input.title).map((sheet) => ({
              name: sheet.name,
              rows: sheet.rows.length,
            })),
          }
  return {
    output: await previewOutputFile(
      { workspace: context.workspace, limits: context.limits, links: context.links },
      { outputPath: input.output_path, suggestedName: input.title, extension: extensions[input.document_type] },
    ),
    document_type: input.document_type,
    layout,
  }
}
