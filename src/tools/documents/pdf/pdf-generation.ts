import { z } from 'zod'
import type { PdfRenderOptions } from '../../../browser/types'
import { ToolError } from '../../../core/errors'
import { fileOutput, saveOutputFile } from '../../../downloads/handoff'
import { FileOutputFields, OutputPath } from '../../../downloads/schemas'
import { assertEmbeddedImagesFit } from '../../embedded-images'
import { assertHtmlNesting } from '../../html-nesting'
import { offloaded } from '../../offload'
import { defineTool, type ToolContext } from '../../tool'
import { PdfPreview, pdfDryRun } from '../dry-runs'
import { documentTasks } from '../tasks'
import { pageCountFromXref } from './page-count'
import { assertPrintableArea, millimetre, paper } from './page-setup'
import type { TextPdfOptions } from './render-text'
import { sanitizeTemplate } from './template'

const maxPages = 2000

const Margin = z.number().min(0).max(100)

const input = z.strictObject({
  content: z.string().max(5_000_000).describe('The document: HTML, Markdown or plain text, as content_type says.'),
  content_type: z
    .enum(['html', 'markdown', 'text'])
    .default('markdown')
    .describe('html | markdown | text. Default: markdown.'),
  title: z.string().min(1).max(200).default('Document').describe('PDF title (metadata, header class "title").'),
  output_path: OutputPath,
  page_size: z.enum(['A4', 'Letter', 'Legal', 'A3', 'A5', 'Tabloid']).default('A4'),
  orientation: z.enum(['portrait', 'landscape']).default('portrait'),
  margins: z
    .strictObject({
      top: Margin.default(20),
      right: Margin.default(20),
      bottom: Margin.default(20),
      left: Margin.default(20),
    })
    .default({ top: 20, right: 20, bottom: 20, left: 20 })
    .describe('Page margins in millimetres. Default: 20 on each side.'),
  header_template: z
    .string()
    .max(10_000)
    .optional()
    .describe('HTML for each page top; <span class="pageNumber">, "totalPages", "title", "date" are filled in.'),
  footer_template: z.string().max(10_000).optional().describe('HTML for each page bottom, like header_template.'),
  print_background: z.boolean().default(true).describe('Print CSS backgrounds (html and markdown with a browser).'),
})

type Input = z.output<typeof input>

function textOptions(request: Input): TextPdfOptions {
  const [short, long] = paper[request.page_size]
  const landscape = request.orientation === 'landscape'
  const { top, right, bottom, left } = request.margins
  return {
    title: request.title,
    box: {
      width: landscape ? long : short,
      height: landscape ? short : long,
      margin: {
        top: top * millimetre,
        right: right * millimetre,
        bottom: bottom * millimetre,
        left: left * millimetre,
      },
    },
    headerTemplate: request.header_template,
    footerTemplate: request.footer_template,
    maxPages,
  }
}

function browserOptions(request: Input): PdfRenderOptions {
  const mm = (value: number) => `${value}mm`
  // Chromium's default template font is tiny and unstyled; templates without a size get 8pt.
  const wrap = (template: string | undefined) =>
    template === undefined
      ? undefined
      : `<div style="font-size:8pt;width:100%;text-align:center;color:#666">${sanitizeTemplate(template)}</div>`
  const header = wrap(request.header_template)
  const footer = wrap(request.footer_template)
  return {
    format: request.page_size,
    landscape: request.orientation === 'landscape',
    margin: {
      top: mm(request.margins.top),
      right: mm(request.margins.right),
      bottom: mm(request.margins.bottom),
      left: mm(request.margins.left),
    },
    printBackground: request.print_background,
    ...(header ? { headerTemplate: header } : {}),
    ...(footer ? { footerTemplate: footer } : {}),
  }
}

type PdfContext = ToolContext<'browser' | 'offload' | 'http' | 'links'>

/** Markdown through pdf-lib, off the event loop (pdf-lib lays out about a thousand lines a second). */
function renderMarkdownWithoutBrowser(request: Input, context: PdfContext) {
  return offloaded(
    context.offload,
    documentTasks,
    'markdown-pdf',
    { markdown: request.content, options: textOptions(request) },
    { signal: context.signal },
  )
}

async function render(
  request: Input,
  context: PdfContext,
): Promise<{ bytes: Uint8Array; pages: number; renderer: 'chromium' | 'pdf-lib' }> {
  if (request.content_type === 'text') {
    const rendered = await offloaded(
      context.offload,
      documentTasks,
      'text-pdf',
      { text: request.content, options: textOptions(request) },
      { signal: context.signal },
    )
    return { ...rendered, renderer: 'pdf-lib' }
  }
  const { browser } = context
  if (!browser) {
    if (request.content_type === 'markdown') {
      return { ...(await renderMarkdownWithoutBrowser(request, context)), renderer: 'pdf-lib' }
    }
    throw new ToolError('unavailable', 'HTML to PDF needs a browser, and this deployment has none.', {
      hint: 'Send the document as content_type "markdown" or "text", which render without a browser.',
    })
  }
  if (request.content_type === 'html') assertHtmlNesting(request.content, 'content')
  await assertEmbeddedImagesFit(request.content, 'content')
  const html =
    request.content_type === 'html'
      ? request.content
      : await offloaded(
          context.offload,
          documentTasks,
          'markdown-html',
          { markdown: request.content, title: request.title },
          { signal: context.signal },
        )
  let bytes: Uint8Array
  try {
    bytes = await browser.renderPdf(html, browserOptions(request), context.signal)
  } catch (error) {
    // Markdown never depends on the browser: when Chromium cannot start, pdf-lib still renders it.
    if (request.content_type !== 'markdown' || !(error instanceof ToolError) || error.code !== 'unavailable')
      throw error
    context.log.warn('browser unavailable; markdown rendered with pdf-lib', { detail: error.message })
    return { ...(await renderMarkdownWithoutBrowser(request, context)), renderer: 'pdf-lib' }
  }
  // Chromium's PDFs are counted from their cross-reference table; any other shape gets the full
  // parse, which for thousands of pages is CPU work worth a worker.
  const pages =
    pageCountFromXref(bytes) ??
    (await offloaded(context.offload, documentTasks, 'pdf-pages', { bytes }, { signal: context.signal }))
  if (pages > maxPages) {
    throw new ToolError('size_exceeded', `The document has ${pages} pages; the limit is ${maxPages}.`, {
      hint: 'Split the content into several PDFs.',
    })
  }
  return { bytes, pages, renderer: 'chromium' }
}

export const pdfGeneration = defineTool({
  name: 'pdf_generation',
  title: 'PDF generation',
  description:
    'Make a PDF from HTML, Markdown or plain text, with page size, orientation, margins and header/footer templates. Automatic page breaks. Returns a download link.',
  effect: 'write',
  uses: ['browser', 'offload', 'http', 'links'],
  input,
  output: z.object({
    ...FileOutputFields,
    pages: z.number().int(),
    renderer: z.enum(['chromium', 'pdf-lib']).describe('chromium for html (and markdown when a browser is available).'),
  }),
  callTitle: (request) => `Make PDF ${request.output_path ?? request.title}`,
  dryRun: pdfDryRun,
  preview: PdfPreview,
  async run(request, context) {
    assertPrintableArea(request)
    const { bytes, pages, renderer } = await render(request, context)
    const file = await saveOutputFile(context, {
      outputPath: request.output_path,
      suggestedName: request.title,
      extension: 'pdf',
      bytes,
    })
    return { ...fileOutput([file]), pages, renderer }
  },
})
