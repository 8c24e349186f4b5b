import { PDFDocument, type RGB } from 'pdf-lib'
import { ToolError } from '../../../core/errors'
import type { Block } from '../markdown'
import { documentFonts } from './fonts'
import { createFlow, createMeasure, type Line, wrapSpans } from './layout'
import {
  bodySize,
  type Context,
  colors,
  finish,
  headingSizes,
  paragraph,
  spansOf,
  type TextPdfOptions,
  table,
} from './pdf-parts'

export type { TextPdfOptions } from './pdf-parts'
export { templateText } from './pdf-parts'

/**
 * Markdown blocks or plain text to PDF with pdf-lib alone: the renderer that needs no browser.
 * Headings, lists (nested, numbered), tables, code, quotes and rules keep their shape.
 */
async function blocks(context: Context, list: readonly Block[], indent: number, bar?: RGB): Promise<void> {
  const { flow, fonts, measure } = context
  for (const block of list) {
    switch (block.type) {
      case 'heading': {
        const size = headingSizes[block.level - 1] ?? bodySize
        flow.y -= size * 0.6
        // Keep a heading with at least two lines of what follows it.
        flow.ensure(size * 1.4 + bodySize * 3)
        await paragraph(
          context,
          block.runs.map((run) => ({ ...run, bold: true })),
          indent,
          size,
          colors.heading,
          bar,
        )
        if (block.level <= 2)
          flow.page.drawLine({
            start: { x: flow.left + indent, y: flow.y - 1 },
            end: { x: flow.left + flow.width, y: flow.y - 1 },
            thickness: block.level === 1 ? 1 : 0.5,
            color: colors.accent,
          })
        flow.y -= 5
        break
      }
      case 'paragraph':
        await paragraph(context, block.runs, indent, bodySize, colors.text, bar)
        flow.y -= 6
        break
      case 'list': {
        const counters: number[] = []
        for (const item of block.items) {
          counters.length = item.level + 1
          counters[item.level] = (counters[item.level] ?? 0) + 1
          const itemIndent = indent + 18 + item.level * 16
          const marker =
            item.checked !== undefined
              ? item.checked
                ? '☑'
                : '☐'
              : item.ordered
                ? `${counters[item.level]}.`
                : ['•', '◦', '▪'][item.level % 3]
          const prefix = wrapSpans(
            [{ text: marker as string, font: await fonts('regular'), size: bodySize, color: colors.muted }],
            40,
            measure,
          )[0] as Line
          const lines = wrapSpans(
            await spansOf(item.runs, fonts, bodySize, colors.text),
            flow.width - itemIndent,
            measure,
          )
          lines.forEach((line, index) => {
            const decor = index === 0 ? { prefix: { line: prefix, x: flow.left + itemIndent - prefix.width - 5 } } : {}
            flow.drawLine(
              line,
              flow.left + itemIndent,
              bodySize * 1.45,
              bar ? { ...decor, bar: { color: bar, x: flow.left + indent - 10 } } : decor,
            )
          })
        }
        flow.y -= 6
        break
      }
      case 'code': {
        const font = await fonts('mono')
        const lines = wrapSpans(
          [{ text: block.text, font, size: 9, color: colors.text }],
          flow.width - indent - 12,
          measure,
        )
        for (const line of lines)
          flow.drawLine(line, flow.left + indent + 6, 12.5, {
            background: { color: colors.codeBg, x: flow.left + indent, width: flow.width - indent },
          })
        flow.y -= 8
        break
      }
      case 'quote':
        await blocks(context, block.blocks, indent + 14, colors.accent)
        break
      case 'table':
        await table(context, block, indent)
        break
      case 'rule':
        flow.ensure(12)
        flow.page.drawLine({
          start: { x: flow.left, y: flow.y - 6 },
          end: { x: flow.left + flow.width, y: flow.y - 6 },
          thickness: 0.8,
          color: colors.border,
        })
        flow.y -= 12
        break
    }
  }
}

/** Chromium header/footer templates, reduced to text: the same template works with both renderers. */
async function start(options: TextPdfOptions): Promise<{ document: PDFDocument; context: Context }> {
  const document = await PDFDocument.create()
  const tooLong = (): never => {
    throw new ToolError('size_exceeded', `The document would have more than ${options.maxPages} pages.`, {
      hint: 'Split the content into several PDFs.',
      details: { limit: options.maxPages },
    })
  }
  const flow = createFlow(document, options.box, options.maxPages, tooLong)
  return { document, context: { flow, fonts: documentFonts(document), measure: createMeasure() } }
}

export async function renderBlocksPdf(
  list: readonly Block[],
  options: TextPdfOptions,
): Promise<{ bytes: Uint8Array; pages: number }> {
  const { document, context } = await start(options)
  await blocks(context, list, 0)
  return { bytes: await finish(document, context, options), pages: context.flow.pages.length }
}

export async function renderPlainTextPdf(
  text: string,
  options: TextPdfOptions,
): Promise<{ bytes: Uint8Array; pages: number }> {
  const { document, context } = await start(options)
  const font = await context.fonts('regular')
  const lines = wrapSpans(
    [{ text: text.replace(/\r\n?/g, '\n'), font, size: bodySize, color: colors.text }],
    context.flow.width,
    context.measure,
  )
  for (const line of lines) context.flow.drawLine(line, context.flow.left, bodySize * 1.45)
  return { bytes: await finish(document, context, options), pages: context.flow.pages.length }
}
