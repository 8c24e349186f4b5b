import { z } from 'zod'
import { ToolError } from '../../../core/errors'
import type { Block } from '../markdown'

/** `content`: Markdown, or structured JSON (sections for Word, slides for PowerPoint, sheets for Excel). */
export const Cell = z.union([z.string().max(32_767), z.number(), z.boolean(), z.null()])
export type Cell = z.output<typeof Cell>

const Rows = z.array(z.array(Cell).max(16_384)).max(1_048_575)
export const Table = z.strictObject({ headers: z.array(z.string()).max(16_384).optional(), rows: Rows })
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
