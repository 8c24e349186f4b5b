import {
  AlignmentType,
  BorderStyle,
  ExternalHyperlink,
  Paragraph,
  type ParagraphChild,
  ShadingType,
  Table,
  TableBorders,
  TableCell,
  TableRow,
  TextRun,
  WidthType,
} from 'docx'
import type { Block, Run } from '../markdown'
import { mixColors, type Theme } from './theme'

/** Word blocks: the title block and each Markdown block as docx paragraphs and tables. */
export const twips = (points: number) => Math.round(points * 20)
export const halfPoints = (points: number) => Math.round(points * 2)
// Word and Excel cap what a table can usefully hold; longer tables belong in an xlsx.
export const maxTableRows = 5000

const borderStyles = {
  solid: BorderStyle.SINGLE,
  dashed: BorderStyle.DASHED,
  dotted: BorderStyle.DOTTED,
  none: BorderStyle.NONE,
} as const

function border(theme: Theme, color = theme.table.borderColor, widthPoints = theme.border.width) {
  return { style: borderStyles[theme.border.style], size: widthPoints * 8, color }
}

// A drop shadow in Word: a heavier, darker border on the bottom and right edges, as a box-shadow looks.
export function shadowBorders(theme: Theme) {
  const dark = mixColors(theme.text, '000000', 0.4)
  return {
    bottom: { style: BorderStyle.SINGLE, size: 24, color: dark },
    right: { style: BorderStyle.SINGLE, size: 24, color: dark },
  }
}

function runsOf(runs: readonly Run[], theme: Theme, extra: { color?: string; size?: number } = {}): ParagraphChild[] {
  return runs.map((run) => {
    const text = new TextRun({
      text: run.text,
      ...(run.bold ? { bold: true } : {}),
      ...(run.italic ? { italics: true } : {}),
      ...(run.strike ? { strike: true } : {}),
      ...(run.code ? { font: 'Courier New', shading: { type: ShadingType.CLEAR, fill: 'F2F2F2', color: 'auto' } } : {}),
      ...(run.link ? { color: theme.accent, underline: {} } : extra.color ? { color: extra.color } : {}),
      ...(extra.size ? { size: halfPoints(extra.size) } : {}),
    })
    return run.link && /^(https?|mailto):/i.test(run.link)
      ? new ExternalHyperlink({ link: run.link, children: [text] })
      : text
  })
}

export const spacer = (theme: Theme) => new Paragraph({ spacing: { after: twips(theme.padding.content) } })

function tableOf(block: Extract<Block, { type: 'table' }>, theme: Theme): (Table | Paragraph)[] {
  const edge = border(theme)
  const shadow = theme.shadow ? shadowBorders(theme) : {}
  const rows = block.rows.slice(0, maxTableRows)
  const cell = (runs: Run[], fill: string, header: boolean) =>
    new TableCell({
      children: [
        new Paragraph({
          children: runsOf(
            header ? runs.map((run) => ({ ...run, bold: true })) : runs,
            theme,
            header ? { color: theme.table.headerText } : {},
          ),
        }),
      ],
      shading: { type: ShadingType.CLEAR, fill, color: 'auto' },
    })
  const tableRows = [
    ...(block.header.length > 0
      ? [
          new TableRow({
            tableHeader: true,
            children: block.header.map((runs) => cell(runs, theme.table.headerBg, true)),
          }),
        ]
      : []),
    ...rows.map(
      (row, index) =>
        new TableRow({
          children: row.map((runs) =>
            cell(runs, index % 2 === 0 ? theme.table.rowBg : theme.table.alternateRowBg, false),
          ),
        }),
    ),
  ]
  if (tableRows.length === 0) return []
  const table = new Table({
    rows: tableRows,
    width: { size: 100, type: WidthType.PERCENTAGE },
    borders: {
      top: edge,
      left: edge,
      bottom: edge,
      right: edge,
      insideHorizontal: edge,
      insideVertical: edge,
      ...shadow,
    },
  })
  const cut = block.rows.length - rows.length
  return cut > 0
    ? [
        table,
        new Paragraph({
          children: [
            new TextRun({
              text: `… ${cut} more rows not shown; make an Excel document for the full table.`,
              italics: true,
            }),
          ],
        }),
      ]
    : [table, spacer(theme)]
}

export function blockToWord(block: Block, theme: Theme, listIndex: { next: number }): (Paragraph | Table)[] {
  switch (block.type) {
    case 'heading': {
      const level = Math.min(block.level, 3)
      const size = theme.headerSize * (level === 1 ? 1 : level === 2 ? 0.8 : 0.65)
      return [
        new Paragraph({
          children: runsOf(block.runs, theme, { color: level === 1 ? theme.primary : theme.secondary, size }),
          heading: (['Heading1', 'Heading2', 'Heading3'] as const)[level - 1],
          spacing: { before: twips(theme.padding.content * 1.5), after: twips(theme.padding.content / 2) },
          ...(level === 1 && theme.border.style !== 'none'
            ? { border: { bottom: { ...border(theme, theme.accent), space: 2 } } }
            : {}),
        }),
      ]
    }
    case 'paragraph':
      return [new Paragraph({ children: runsOf(block.runs, theme) })]
    case 'list': {
      const instance = listIndex.next++
      return block.items.map((item) => {
        const prefix = item.checked === undefined ? [] : [{ text: item.checked ? '☑ ' : '☐ ' }]
        const children = runsOf([...prefix, ...item.runs], theme)
        const level = Math.min(item.level, 8)
        return item.ordered
          ? new Paragraph({ children, numbering: { reference: 'ordered', level, instance } })
          : new Paragraph({ children, bullet: { level } })
      })
    }
    case 'table':
      return tableOf(block, theme)
    case 'code':
      return block.text.split('\n').map(
        (line) =>
          new Paragraph({
            children: [new TextRun({ text: line || ' ', font: 'Courier New', italics: false })],
            shading: { type: ShadingType.CLEAR, fill: 'F5F5F5', color: 'auto' },
            spacing: { after: 0 },
            border: { left: { style: BorderStyle.SINGLE, size: 18, color: theme.accent, space: 6 } },
          }),
      )
    case 'quote':
      // Quoted text is indented behind an accent bar; nested lists and tables keep their own form.
      return block.blocks.flatMap((inner) =>
        inner.type === 'paragraph' || inner.type === 'heading'
          ? [
              new Paragraph({
                children: runsOf(
                  inner.runs.map((run) => ({ ...run, italic: true })),
                  theme,
                  { color: theme.secondary },
                ),
                indent: { left: 567 },
                border: { left: { style: BorderStyle.SINGLE, size: 18, color: theme.accent, space: 8 } },
              }),
            ]
          : blockToWord(inner, theme, listIndex),
      )
    case 'rule':
      return [
        new Paragraph({
          border: {
            bottom: { style: BorderStyle.SINGLE, size: 8 * theme.border.width, color: theme.accent, space: 1 },
          },
        }),
      ]
  }
}

const noBorder = { style: BorderStyle.NONE, size: 0, color: 'auto' }

/**
 * The title as a one-cell table: a cell's fill covers its whole height, where paragraph shading
 * leaves large type half outside it. solid: a filled bar; gradient: the bar over a band of cells
 * stepping from primary to secondary (Word has no gradient fill); banner: centered, taller, accent rule.
 */
export function titleBlock(title: string, theme: Theme): (Paragraph | Table)[] {
  const banner = theme.headerStyle === 'banner'
  const padding = twips(theme.padding.header / (banner ? 1 : 2))
  const run = new TextRun({
    text: title,
    bold: theme.boldTitle,
    color: theme.onPrimary,
    size: halfPoints(theme.headerSize * 1.4),
  })
  const shadow = theme.shadow ? shadowBorders(theme) : {}
  const cell = new TableCell({
    children: [
      new Paragraph({
        children: [run],
        alignment: banner ? AlignmentType.CENTER : AlignmentType.LEFT,
        spacing: { after: 0 },
      }),
    ],
    shading: { type: ShadingType.CLEAR, fill: theme.primary, color: 'auto' },
    margins: { top: padding, bottom: padding, left: twips(10), right: twips(10) },
    borders: {
      top: noBorder,
      left: noBorder,
      right: noBorder,
      bottom: banner ? { style: BorderStyle.SINGLE, size: 48, color: theme.accent } : noBorder,
      ...shadow,
    },
  })
  const bar = new Table({
    rows: [new TableRow({ children: [cell] })],
    width: { size: 100, type: WidthType.PERCENTAGE },
  })
  if (theme.headerStyle !== 'gradient') return [bar, spacer(theme)]
  const steps = 16
  const band = new Table({
    width: { size: 100, type: WidthType.PERCENTAGE },
    borders: TableBorders.NONE,
    rows: [
      new TableRow({
        height: { value: twips(8), rule: 'exact' },
        children: Array.from(
          { length: steps },
          (_, index) =>
            new TableCell({
              children: [new Paragraph({})],
              shading: {
                type: ShadingType.CLEAR,
                fill: mixColors(theme.primary, theme.secondary, index / (steps - 1)),
                color: 'auto',
              },
              borders: { top: noBorder, bottom: noBorder, left: noBorder, right: noBorder },
            }),
        ),
      }),
    ],
  })
  return [bar, band, spacer(theme)]
}
