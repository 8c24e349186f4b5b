import { Lexer, type Token, type Tokens } from 'marked'
import { assertMarkdownNesting } from './markdown-limits'

/**
 * Markdown as a small block model that every writer (Word, PowerPoint, Excel, pdf-lib) renders the
 * same way. Parsed with marked's lexer only: no HTML is produced here, and raw HTML in the source
 * becomes its visible text, so nothing active can reach a document.
 */
export interface Run {
  text: string
  bold?: boolean
  italic?: boolean
  code?: boolean
  strike?: boolean
  link?: string
}

export interface ListItem {
  runs: Run[]
  /** 0 for top-level items, 1 for items nested once, … */
  level: number
  ordered: boolean
  checked?: boolean
}

export type Block =
  | { type: 'heading'; level: number; runs: Run[] }
  | { type: 'paragraph'; runs: Run[] }
  | { type: 'list'; items: ListItem[] }
  | { type: 'table'; header: Run[][]; rows: Run[][][] }
  | { type: 'code'; text: string }
  | { type: 'quote'; blocks: Block[] }
  | { type: 'rule' }

type Style = Omit<Run, 'text'>

const entities: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", nbsp: '\u00a0' }

export function decodeEntities(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39|nbsp);/g, (_, name: string) => entities[name] ?? '')
}

/** Visible text of raw HTML: tags dropped, script and style bodies removed. */
export function htmlToText(html: string): string {
  return decodeEntities(
    html
      .replace(/<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, '')
      .replace(/<br\s*\/?>/gi, '\n')
      .replace(/<[^>]*>/g, ''),
  )
}

function inlineRuns(tokens: Token[] | undefined, style: Style = {}): Run[] {
  const runs: Run[] = []
  for (const token of tokens ?? []) {
    switch (token.type) {
      case 'strong':
        runs.push(...inlineRuns((token as Tokens.Strong).tokens, { ...style, bold: true }))
        break
      case 'em':
        runs.push(...inlineRuns((token as Tokens.Em).tokens, { ...style, italic: true }))
        break
      case 'del':
        runs.push(...inlineRuns((token as Tokens.Del).tokens, { ...style, strike: true }))
        break
      case 'codespan':
        runs.push({ ...style, code: true, text: decodeEntities((token as Tokens.Codespan).text) })
        break
      case 'link':
        runs.push(...inlineRuns((token as Tokens.Link).tokens, { ...style, link: (token as Tokens.Link).href }))
        break
      case 'image':
        runs.push({ ...style, text: (token as Tokens.Image).text || '[image]' })
        break
      case 'br':
        runs.push({ ...style, text: '\n' })
        break
      case 'html':
        runs.push({ ...style, text: htmlToText((token as Tokens.HTML).text) })
        break
      case 'text': {
        const text = token as Tokens.Text
        if (text.tokens && text.tokens.length > 0) runs.push(...inlineRuns(text.tokens, style))
        else runs.push({ ...style, text: decodeEntities(text.text) })
        break
      }
      default:
        if ('text' in token && typeof token.text === 'string') runs.push({ ...style, text: decodeEntities(token.text) })
    }
  }
  return mergeRuns(runs)
}

function sameStyle(a: Run, b: Run): boolean {
  return a.bold === b.bold && a.italic === b.italic && a.code === b.code && a.strike === b.strike && a.link === b.link
}

function mergeRuns(runs: Run[]): Run[] {
  const merged: Run[] = []
  for (const run of runs) {
    if (run.text === '') continue
    const last = merged.at(-1)
    if (last && sameStyle(last, run)) last.text += run.text
    else merged.push({ ...run })
  }
  return merged
}

function listItems(list: Tokens.List, level: number): ListItem[] {
  const items: ListItem[] = []
  for (const item of list.items) {
    const runs: Run[] = []
    const nested: ListItem[] = []
    for (const child of item.tokens) {
      if (child.type === 'list') nested.push(...listItems(child as Tokens.List, level + 1))
      else if (child.type === 'text' || child.type === 'paragraph') {
        if (runs.length > 0) runs.push({ text: ' ' })
        runs.push(...inlineRuns((child as Tokens.Text).tokens ?? [{ ...child, tokens: undefined } as Token]))
      } else if (child.type !== 'space' && child.type !== 'checkbox') {
        runs.push({ text: plainText(blocksOf([child])) })
      }
    }
    items.push({
      runs: mergeRuns(runs),
      level,
      ordered: list.ordered,
      ...(item.task ? { checked: item.checked === true } : {}),
    })
    items.push(...nested)
  }
  return items
}

function blocksOf(tokens: Token[]): Block[] {
  const blocks: Block[] = []
  for (const token of tokens) {
    switch (token.type) {
      case 'heading':
        blocks.push({ type: 'heading', level: (token as Tokens.Heading).depth, runs: inlineRuns(token.tokens) })
        break
      case 'paragraph':
        blocks.push({ type: 'paragraph', runs: inlineRuns(token.tokens) })
        break
      case 'text':
        blocks.push({ type: 'paragraph', runs: inlineRuns(token.tokens ?? [token]) })
        break
      case 'list':
        blocks.push({ type: 'list', items: listItems(token as Tokens.List, 0) })
        break
      case 'table': {
        const table = token as Tokens.Table
        blocks.push({
          type: 'table',
          header: table.header.map((cell) => inlineRuns(cell.tokens)),
          rows: table.rows.map((row) => row.map((cell) => inlineRuns(cell.tokens))),
        })
        break
      }
      case 'code':
        blocks.push({ type: 'code', text: (token as Tokens.Code).text })
        break
      case 'blockquote':
        blocks.push({ type: 'quote', blocks: blocksOf((token as Tokens.Blockquote).tokens) })
        break
      case 'hr':
        blocks.push({ type: 'rule' })
        break
      case 'html': {
        const text = htmlToText((token as Tokens.HTML).text).trim()
        if (text) blocks.push({ type: 'paragraph', runs: [{ text }] })
        break
      }
    }
  }
  return blocks
}

export function parseMarkdown(markdown: string): Block[] {
  assertMarkdownNesting(markdown)
  return blocksOf(new Lexer({ gfm: true }).lex(markdown))
}

export function runsText(runs: readonly Run[]): string {
  return runs.map((run) => run.text).join('')
}

/** The text of blocks, one block per line: for cells, slide notes and plain fallbacks. */
export function plainText(blocks: readonly Block[]): string {
  const lines: string[] = []
  for (const block of blocks) {
    if (block.type === 'heading' || block.type === 'paragraph') lines.push(runsText(block.runs))
    else if (block.type === 'list')
      for (const item of block.items) lines.push(`${'  '.repeat(item.level)}• ${runsText(item.runs)}`)
    else if (block.type === 'table') {
      lines.push(block.header.map(runsText).join('\t'))
      for (const row of block.rows) lines.push(row.map(runsText).join('\t'))
    } else if (block.type === 'code') lines.push(block.text)
    else if (block.type === 'quote') lines.push(plainText(block.blocks))
  }
  return lines.join('\n')
}
