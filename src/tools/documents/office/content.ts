import { z } from 'zod'
import { ToolError } from '../../../core/errors'
import { type Block, parseMarkdown, plainText, type Run, runsText } from '../markdown'

/** `content`: Markdown, or structured JSON (sections for Word, slides for PowerPoint, sheets for Excel). */
export const Cell = z.union([z.string().max(32_767), z.number(), z.boolean(), z.null()])
export type Cell = z.output<typeof Cell>

const Rows = z.array(z.array(Cell).max(16_384)).max(1_048_575)
const Table = z.strictObject({ headers: z.array(z.string()).max(16_384).optional(), rows: Rows })
const Markdown = z.string().max(1_000_000)
const Items = z.array(z.string().max(10_000)).max(10_000)

const Section = z.strictObject({
  heading: z.string().max(1000).optional(),
  level: z.number().int().min(1).max(6).default(1),
  text: Markdown.optional().describe('Markdown.'),
  bullets: Items.optional(),
  numbered: Items.optional(),
  table: Table.optional(),
})

const Slide = z.strictObject({
  title: z.string().max(1000).optional(),
  subtitle: z.string().max(1000).optional(),
  text: Markdown.optional().describe('Markdown.'),
  bullets: Items.optional(),
  numbered: Items.optional(),
  table: Table.optional(),
  notes: z.string().max(100_000).optional().describe('Speaker notes.'),
})

const Sheet = z.strictObject({
  name: z.string().min(1).max(100),
  headers: z.array(z.string().max(1000)).max(16_384).optional(),
  rows: Rows,
  column_widths: z.array(z.number().min(1).max(255)).max(16_384).optional().describe('Characters per column.'),
})

export const StructuredContent = z.strictObject({
  sections: z.array(Section).max(10_000).optional(),
  slides: z.array(Slide).max(1000).optional(),
  sheets: z.array(Sheet).max(100).optional(),
})

export const Content = z
  .union([z.string().max(5_000_000), StructuredContent])
  .describe(
    'Markdown (headings, paragraphs, lists, tables, **bold**, *italic*) or JSON: {sections:[{heading,text,bullets,numbered,table}]}, {slides:[{title,subtitle,text,bullets,table,notes}]} or {sheets:[{name,headers,rows}]}.',
  )
export type Content = z.output<typeof Content>

/**
 * Content sent as a string that is JSON: models often serialize the structured form. A JSON object
 * that is structured content is used as such; any other JSON object or array is refused with a hint,
 * since rendering it as literal text is never what was meant. Anything else is Markdown.
 */
export function contentOf(content: Content): Content {
  if (typeof content !== 'string') return content
  const text = content.trim()
  if (!/^[[{]/.test(text)) return content
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return content
  }
  const parsed = StructuredContent.safeParse(json)
  const known = typeof json === 'object' && json !== null && !Array.isArray(json)
  if (parsed.success && known && Object.keys(json as object).length > 0) return parsed.data
  const issue = parsed.success ? undefined : parsed.error.issues[0]
  const where = issue?.path.length ? ` (content.${issue.path.join('.')}: ${issue.message})` : ''
  throw new ToolError('validation', `content is a JSON string that is not structured content${where}.`, {
    hint: 'Send content as a JSON object (not a string) with sections, slides or sheets, e.g. {"sheets":[{"name":"Data","headers":["a"],"rows":[[1]]}]}; or send Markdown text.',
    details: { field: issue?.path.length ? `content.${issue.path.join('.')}` : 'content' },
  })
}

export interface DocSection {
  title?: string
  subtitle?: string
  level: number
  blocks: Block[]
  notes?: string
}

export interface SheetData {
  name: string
  headers?: Cell[]
  rows: Cell[][]
  columnWidths?: number[]
  /** Rows that came from markdown headings, shown as headings in the sheet. */
  headingRows?: ReadonlySet<number>
}

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
