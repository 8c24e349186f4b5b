import type PptxGenJS from 'pptxgenjs'
import type { Block, Run } from '../markdown'
import { runsText } from '../markdown'
import { mixColors, type Theme } from './theme'

/** Building blocks of a slide: header band, text boxes in the chosen layout, tables. Inches throughout. */
export const slideWidth = 10
export const slideHeight = 5.625
export const inch = (points: number) => points / 72

export type Slide = ReturnType<PptxGenJS['addSlide']>
export type TextRun = { text: string; options?: Record<string, unknown> }

const dash = { solid: 'solid', dashed: 'dash', dotted: 'sysDot' } as const

export function shadow(theme: Theme) {
  return theme.shadow
    ? { shadow: { type: 'outer' as const, color: '000000', opacity: 0.35, blur: 6, offset: 3, angle: 45 } }
    : {}
}

export function outline(theme: Theme, color: string) {
  return theme.border.style === 'none'
    ? {}
    : { line: { color, width: theme.border.width, dashType: dash[theme.border.style] } }
}

/** The header band in the chosen style: solid fill, a stepped gradient, or a banner with an accent stripe. */
export function band(slide: Slide, theme: Theme, y: number, h: number): void {
  if (theme.headerStyle === 'gradient') {
    const steps = 24
    for (let index = 0; index < steps; index++) {
      slide.addShape('rect', {
        x: (slideWidth / steps) * index,
        y,
        w: slideWidth / steps + 0.01,
        h,
        fill: { color: mixColors(theme.primary, theme.secondary, index / (steps - 1)) },
        line: { type: 'none' },
      })
    }
    return
  }
  slide.addShape('rect', {
    x: 0,
    y,
    w: slideWidth,
    h,
    fill: { color: theme.primary },
    line: { type: 'none' },
    ...shadow(theme),
  })
  if (theme.headerStyle === 'banner') {
    slide.addShape('rect', {
      x: 0,
      y: y + h,
      w: slideWidth,
      h: 0.1,
      fill: { color: theme.accent },
      line: { type: 'none' },
    })
  }
}

export function textRuns(runs: readonly Run[], theme: Theme, extra: Record<string, unknown> = {}): TextRun[] {
  return runs.map((run) => ({
    text: run.text,
    options: {
      ...extra,
      ...(run.bold ? { bold: true } : {}),
      ...(run.italic ? { italic: true } : {}),
      ...(run.strike ? { strike: 'sngStrike' } : {}),
      ...(run.code ? { fontFace: 'Courier New' } : {}),
      ...(run.link && /^(https?|mailto):/i.test(run.link) ? { hyperlink: { url: run.link }, color: theme.accent } : {}),
    },
  }))
}

/** One text paragraph per entry; the last run of each ends the line. */
export function paragraphs(blocks: readonly Block[], theme: Theme): TextRun[][] {
  const lines: TextRun[][] = []
  for (const block of blocks) {
    if (block.type === 'paragraph') lines.push(textRuns(block.runs, theme))
    else if (block.type === 'heading') lines.push(textRuns(block.runs, theme, { bold: true, color: theme.secondary }))
    else if (block.type === 'list') {
      for (const item of block.items) {
        const bullet = item.ordered ? { type: 'number' } : { code: '2022', color: theme.accent }
        lines.push(textRuns(item.runs, theme, { bullet, indentLevel: item.level }))
      }
    } else if (block.type === 'code')
      lines.push(...block.text.split('\n').map((line) => [{ text: line || ' ', options: { fontFace: 'Courier New' } }]))
    else if (block.type === 'quote')
      lines.push(
        ...paragraphs(block.blocks, theme).map((line) =>
          line.map((run) => ({ ...run, options: { ...run.options, italic: true } })),
        ),
      )
  }
  return lines
}

export function joinLines(lines: TextRun[][]): TextRun[] {
  return lines.flatMap((line, index) =>
    line.map((run, position) =>
      position === line.length - 1 && index < lines.length - 1
        ? { ...run, options: { ...run.options, breakLine: true } }
        : run,
    ),
  )
}

export interface Frame {
  x: number
  y: number
  w: number
  h: number
}

/**
 * The title band of a content slide, from the slide's top edge: margin_top above the title line,
 * padding_header shared around it.
 */
export function titleBand(theme: Theme): { bandHeight: number; textY: number; textHeight: number } {
  const textHeight = inch(theme.headerSize * 1.5 + theme.padding.header / 2)
  const textY = inch(theme.margin.top)
  return { bandHeight: textY + textHeight, textY, textHeight }
}

export function bodyFrame(theme: Theme): Frame {
  const top = titleBand(theme).bandHeight + inch(theme.padding.content)
  const bottom = slideHeight - inch(theme.margin.bottom) - inch(theme.footerSize * 1.6 + theme.padding.footer / 2)
  const x = inch(theme.margin.left)
  return { x, y: top, w: slideWidth - x - inch(theme.margin.right), h: Math.max(0.5, bottom - top) }
}

/** Splits lines into the layout's boxes: columns side by side, or a 2×2 grid. */
export function boxes(frame: Frame, theme: Theme, count: number): Frame[] {
  const gap = 0.2
  if (theme.layout === 'grid') {
    const w = (frame.w - gap) / 2
    const h = count > 2 ? (frame.h - gap) / 2 : frame.h
    return Array.from({ length: Math.min(4, Math.max(1, count)) }, (_, index) => ({
      x: frame.x + (index % 2) * (w + gap),
      y: frame.y + Math.floor(index / 2) * (h + gap),
      w,
      h,
    }))
  }
  const w = (frame.w - gap * (theme.columns - 1)) / theme.columns
  return Array.from({ length: theme.columns }, (_, index) => ({
    x: frame.x + index * (w + gap),
    y: frame.y,
    w,
    h: frame.h,
  }))
}

export function addText(slide: Slide, lines: TextRun[][], frame: Frame, theme: Theme): void {
  const frames = boxes(frame, theme, lines.length)
  const perBox = Math.ceil(lines.length / frames.length)
  frames.forEach((box, index) => {
    const chunk = lines.slice(index * perBox, (index + 1) * perBox)
    if (chunk.length === 0) return
    slide.addText(joinLines(chunk) as never, {
      ...box,
      valign: 'top',
      fontFace: theme.font,
      fontSize: theme.bodySize,
      color: theme.text,
      italic: theme.italicBody,
      lineSpacingMultiple: theme.lineSpacing,
      paraSpaceAfter: theme.padding.content / 2,
      margin: 6,
      ...(frames.length > 1 || theme.shadow ? outline(theme, theme.table.borderColor) : {}),
      // A filled box casts the shadow; without a fill PowerPoint shadows each glyph instead.
      ...(theme.shadow ? { fill: { color: theme.background }, ...shadow(theme) } : {}),
    })
  })
}

export function addTable(
  slide: Slide,
  table: Extract<Block, { type: 'table' }>,
  rows: Run[][][],
  frame: Frame,
  theme: Theme,
): void {
  const cell = (runs: Run[], fill: string, header: boolean) => ({
    text: runsText(runs),
    options: { fill: { color: fill }, ...(header ? { bold: true, color: theme.table.headerText } : {}) },
  })
  const data = [
    ...(table.header.length > 0 ? [table.header.map((runs) => cell(runs, theme.table.headerBg, true))] : []),
    ...rows.map((row, index) =>
      row.map((runs) => cell(runs, index % 2 === 0 ? theme.table.rowBg : theme.table.alternateRowBg, false)),
    ),
  ]
  if (data.length === 0) return
  // pptxgenjs draws table borders solid or dashed only; a dotted border is made dotted after writing (dotTableBorders).
  const type = theme.border.style === 'none' ? 'none' : theme.border.style === 'solid' ? 'solid' : 'dash'
  slide.addTable(data as never, {
    x: frame.x,
    y: frame.y,
    w: frame.w,
    fontFace: theme.font,
    fontSize: Math.min(theme.bodySize, 14),
    color: theme.text,
    border: { type, pt: theme.border.width, color: theme.table.borderColor },
    ...shadow(theme),
  })
}
