import { type PDFDocument, type PDFFont, type RGB, rgb } from 'pdf-lib'
import { type Block, htmlToText, type Run } from '../markdown'
import type { FontSet } from './fonts'
import { type Flow, hexColor, type Line, type Measure, type PageBox, type Span, wrapSpans } from './layout'

/** Shared pieces of the pdf-lib renderer: styles, inline spans, paragraphs, tables, page furniture. */
export interface TextPdfOptions {
  title: string
  box: PageBox
  headerTemplate?: string | undefined
  footerTemplate?: string | undefined
  maxPages: number
}

export const bodySize = 10.5
export const headingSizes = [20, 16, 13.5, 12, 11, 10.5]
export const colors = {
  text: hexColor('222222'),
  heading: hexColor('1F3864'),
  muted: hexColor('666666'),
  accent: hexColor('2E75B6'),
  codeBg: hexColor('F3F4F6'),
  tableHeader: hexColor('1F3864'),
  tableAlt: hexColor('F2F5FA'),
  border: hexColor('BFBFBF'),
  white: rgb(1, 1, 1),
}

export interface Context {
  flow: Flow
  fonts: FontSet
  measure: Measure
}

async function fontOf(run: Run, fonts: FontSet): Promise<PDFFont> {
  if (run.code) return fonts(run.bold ? 'monoBold' : 'mono')
  if (run.bold && run.italic) return fonts('boldItalic')
  return fonts(run.bold ? 'bold' : run.italic ? 'italic' : 'regular')
}

export async function spansOf(runs: readonly Run[], fonts: FontSet, size: number, color: RGB): Promise<Span[]> {
  return Promise.all(
    runs.map(async (run) => ({
      text: run.text,
      font: await fontOf(run, fonts),
      size,
      color: run.link ? colors.accent : color,
    })),
  )
}

export async function paragraph(
  context: Context,
  runs: readonly Run[],
  indent: number,
  size = bodySize,
  color = colors.text,
  bar?: RGB,
) {
  const { flow, measure } = context
  const lines = wrapSpans(await spansOf(runs, context.fonts, size, color), flow.width - indent, measure)
  for (const line of lines)
    flow.drawLine(line, flow.left + indent, size * 1.45, bar ? { bar: { color: bar, x: flow.left + indent - 10 } } : {})
}

export async function table(context: Context, block: Extract<Block, { type: 'table' }>, indent: number) {
  const { flow, fonts, measure } = context
  const columns = Math.max(block.header.length, ...block.rows.map((row) => row.length), 1)
  const cellWidth = (flow.width - indent) / columns
  const pad = 4
  const size = bodySize - 1
  const lineHeight = size * 1.35
  const maxLines = Math.floor((flow.y - 2 * pad) / lineHeight) - 2
  const layoutRow = async (cells: Run[][], header: boolean) =>
    Promise.all(
      Array.from({ length: columns }, async (_, index) => {
        const runs = (cells[index] ?? []).map((run) => (header ? { ...run, bold: true } : run))
        const lines = wrapSpans(
          await spansOf(runs, fonts, size, header ? colors.white : colors.text),
          cellWidth - 2 * pad,
          measure,
        )
        return lines.slice(0, Math.max(1, maxLines))
      }),
    )
  const drawRow = (cells: Line[][], fill: RGB | undefined) => {
    const height = Math.max(...cells.map((lines) => lines.length)) * lineHeight + 2 * pad
    flow.ensure(height)
    const top = flow.y
    cells.forEach((lines, index) => {
      const x = flow.left + indent + index * cellWidth
      flow.page.drawRectangle({
        x,
        y: top - height,
        width: cellWidth,
        height,
        ...(fill ? { color: fill } : {}),
        borderColor: colors.border,
        borderWidth: 0.6,
      })
      flow.y = top - pad
      for (const line of lines) flow.drawLine(line, x + pad, lineHeight)
    })
    flow.y = top - height
  }
  const header = block.header.length > 0 ? await layoutRow(block.header, true) : undefined
  if (header) drawRow(header, colors.tableHeader)
  for (const [index, row] of block.rows.entries()) {
    const cells = await layoutRow(row, false)
    const height = Math.max(...cells.map((lines) => lines.length)) * lineHeight + 2 * pad
    const before = flow.pages.length
    flow.ensure(height)
    // A table that continues on a new page repeats its header row.
    if (header && flow.pages.length > before) drawRow(header, colors.tableHeader)
    drawRow(cells, index % 2 === 1 ? colors.tableAlt : undefined)
  }
  flow.y -= 8
}

export function templateText(template: string, values: Record<string, string>): string {
  const filled = template.replace(
    /<(\w+)[^>]*\bclass\s*=\s*["'][^"']*\b(pageNumber|totalPages|title|date|url)\b[^"']*["'][^>]*>\s*<\/\1\s*>/g,
    (_, _tag: string, name: string) => values[name] ?? '',
  )
  return htmlToText(filled).replace(/\s+/g, ' ').trim()
}

export async function finish(document: PDFDocument, context: Context, options: TextPdfOptions): Promise<Uint8Array> {
  const { pages } = context.flow
  const font = await context.fonts('regular')
  const date = new Date().toISOString().slice(0, 10)
  pages.forEach((page, index) => {
    const values = {
      pageNumber: String(index + 1),
      totalPages: String(pages.length),
      title: options.title,
      date,
      url: '',
    }
    for (const [template, y] of [
      [options.headerTemplate, options.box.height - options.box.margin.top / 2],
      [options.footerTemplate, options.box.margin.bottom / 2 - 4],
    ] as const) {
      if (!template) continue
      const text = templateText(template, values)
      const line = wrapSpans([{ text, font, size: 8, color: colors.muted }], context.flow.width, context.measure)[0]
      if (line)
        page.drawText(line.pieces.map((piece) => piece.text).join(''), {
          x: (options.box.width - line.width) / 2,
          y,
          size: 8,
          font,
          color: colors.muted,
        })
    }
  })
  document.setTitle(options.title)
  document.setProducer('toolport (pdf-lib)')
  return document.save()
}
