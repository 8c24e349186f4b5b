import type { z } from 'zod'
import { type Block, parseMarkdown, plainText, type Run, runsText } from '../markdown'
import type { Cell, Content, DocSection, SheetData, Table } from './content'

// Content turned into the renderers' blocks, sections and sheets: the Markdown parser (marked) comes
// with this file, which office_document and its dry run import on their first call.

const cellRuns = (cell: Cell): Run[] => [{ text: cell === null ? '' : String(cell) }]

function tableBlock(table: z.output<typeof Table>): Block {
  return {
    type: 'table',
    header: (table.headers ?? []).map(cellRuns),
    rows: table.rows.map((row) => row.map(cellRuns)),
  }
}

function partBlocks(part: {
  text?: string | undefined
  bullets?: string[] | undefined
  numbered?: string[] | undefined
  table?: z.output<typeof Table> | undefined
}): Block[] {
  const blocks = part.text ? parseMarkdown(part.text) : []
  const list = (items: string[], ordered: boolean): Block => ({
    type: 'list',
    items: items.map((text) => ({ runs: [{ text }], level: 0, ordered })),
  })
  if (part.bullets?.length) blocks.push(list(part.bullets, false))
  if (part.numbered?.length) blocks.push(list(part.numbered, true))
  if (part.table) blocks.push(tableBlock(part.table))
  return blocks
}

/** Content as titled sections: one per JSON section or slide, or per top-level Markdown heading. */
export function toSections(content: Content): DocSection[] {
  if (typeof content === 'string') return splitAtHeadings(parseMarkdown(content))
  const sections: DocSection[] = []
  for (const section of content.sections ?? []) {
    sections.push({
      ...(section.heading ? { title: section.heading } : {}),
      level: section.level,
      blocks: partBlocks(section),
    })
  }
  for (const slide of content.slides ?? []) {
    sections.push({
      ...(slide.title ? { title: slide.title } : {}),
      ...(slide.subtitle ? { subtitle: slide.subtitle } : {}),
      ...(slide.notes ? { notes: slide.notes } : {}),
      level: 1,
      blocks: partBlocks(slide),
    })
  }
  for (const sheet of content.sheets ?? []) {
    sections.push({
      title: sheet.name,
      level: 1,
      blocks: [tableBlock({ headers: sheet.headers?.map(String), rows: sheet.rows })],
    })
  }
  return sections
}

function splitAtHeadings(blocks: Block[]): DocSection[] {
  const levels = blocks.flatMap((block) => (block.type === 'heading' ? [block.level] : []))
  const top = levels.length > 0 ? Math.min(...levels) : 0
  const sections: DocSection[] = []
  let current: DocSection = { level: 1, blocks: [] }
  for (const block of blocks) {
    if (block.type === 'heading' && block.level === top) {
      if (current.title !== undefined || current.blocks.length > 0) sections.push(current)
      current = { title: runsText(block.runs), level: 1, blocks: [] }
    } else current.blocks.push(block)
  }
  if (current.title !== undefined || current.blocks.length > 0) sections.push(current)
  return sections
}

/** All blocks of the content in reading order, section titles as headings (for Word and PDF). */
export function toBlocks(content: Content): Block[] {
  if (typeof content === 'string') return parseMarkdown(content)
  const blocks: Block[] = []
  for (const section of toSections(content)) {
    if (section.title) blocks.push({ type: 'heading', level: section.level, runs: [{ text: section.title }] })
    if (section.subtitle) blocks.push({ type: 'paragraph', runs: [{ text: section.subtitle, italic: true }] })
    blocks.push(...section.blocks)
  }
  return blocks
}

const numeric = /^-?(?:\d+|\d{1,3}(?:,\d{3})+)(?:\.\d+)?$/

/** Markdown table cells that are plain numbers become numbers, so Excel can sum them. */
function cellValue(runs: Run[]): Cell {
  const text = runsText(runs).trim()
  return numeric.test(text) ? Number(text.replaceAll(',', '')) : text
}

/** Sheets: JSON sheets as given; otherwise one sheet per table plus a sheet with the text. */
export function toSheets(content: Content, title: string): SheetData[] {
  if (typeof content !== 'string' && content.sheets?.length) {
    return content.sheets.map((sheet) => ({
      name: sheet.name,
      ...(sheet.headers ? { headers: sheet.headers } : {}),
      rows: sheet.rows,
      ...(sheet.column_widths ? { columnWidths: sheet.column_widths } : {}),
    }))
  }
  const sheets: SheetData[] = []
  const text: SheetData = { name: title || 'Document', rows: [], headingRows: new Set<number>() }
  let lastHeading = ''
  for (const block of toBlocks(content)) {
    if (block.type === 'table') {
      sheets.push({
        name: lastHeading || `Table ${sheets.length + 1}`,
        headers: block.header.map(runsText),
        rows: block.rows.map((row) => row.map(cellValue)),
      })
      continue
    }
    if (block.type === 'heading') {
      lastHeading = runsText(block.runs)
      ;(text.headingRows as Set<number>).add(text.rows.length)
    }
    for (const line of plainText([block]).split('\n')) text.rows.push([line])
  }
  return text.rows.length > 0 || sheets.length === 0 ? [text, ...sheets] : sheets
}
