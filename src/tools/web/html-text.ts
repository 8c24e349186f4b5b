import { headings, tokenize } from './html-tokens'

// Elements whose text is no reading matter.
const skippedElements = new Set(['script', 'style', 'noscript', 'template'])
// Elements that start a paragraph (a blank line) or a line of their own.
const paragraphElements = new Set(['p', ...headings, 'blockquote', 'pre', 'ul', 'ol', 'dl', 'table', 'figure', 'hr'])
const lineElements = new Set([
  'address',
  'article',
  'aside',
  'body',
  'br',
  'caption',
  'dd',
  'details',
  'dialog',
  'div',
  'dt',
  'fieldset',
  'figcaption',
  'footer',
  'form',
  'header',
  'hgroup',
  'legend',
  'li',
  'main',
  'nav',
  'option',
  'section',
  'summary',
  'tbody',
  'tfoot',
  'thead',
  'tr',
])
const cellElements = new Set(['td', 'th'])

export interface PlainPage {
  title: string
  text: string
}

/**
 * All the text of a page in document order, without building a tree: text of script, style, noscript and
 * template elements left out, whitespace collapsed, block elements on lines of their own and paragraphs
 * apart by a blank line. One pass over the markup, linear in its length at any depth.
 */
export function plainTextOf(html: string): PlainPage {
  const skipped = new Map<string, number>()
  let skipping = 0
  let inTitle = false
  let titleDone = false
  let title = ''
  const parts: string[] = []
  let breaks = 0
  let space = false

  function text(value: string): void {
    if (skipping > 0) return
    if (inTitle) {
      if (!titleDone) title += value
      return
    }
    let body = value.replace(/[\t\n\f\r ]+/g, ' ')
    if (body.startsWith(' ')) {
      space = true
      body = body.slice(1)
    }
    if (body === '') return
    const trailing = body.endsWith(' ')
    if (trailing) body = body.slice(0, -1)
    if (parts.length > 0) {
      if (breaks > 0) parts.push(breaks > 1 ? '\n\n' : '\n')
      else if (space) parts.push(' ')
    }
    parts.push(body)
    breaks = 0
    space = trailing
  }

  function boundary(name: string): void {
    if (paragraphElements.has(name)) breaks = 2
    else if (lineElements.has(name)) breaks = Math.max(breaks, 1)
    else if (cellElements.has(name)) space = true
  }

  const tokenizer = tokenize({
    onopentagname(start, end) {
      const name = html.slice(start, end).toLowerCase()
      if (skippedElements.has(name)) {
        skipped.set(name, (skipped.get(name) ?? 0) + 1)
        skipping++
      } else if (name === 'title' && !titleDone) inTitle = true
      boundary(name)
    },
    onclosetag(start, end) {
      const name = html.slice(start, end).toLowerCase()
      const open = skipped.get(name) ?? 0
      if (open > 0) {
        skipped.set(name, open - 1)
        skipping--
      } else if (name === 'title' && inTitle) {
        inTitle = false
        titleDone = true
      }
      boundary(name)
    },
    ontext(start, end) {
      text(html.slice(start, end))
    },
    ontextentity(codepoint) {
      text(codepoint <= 0x10ffff ? String.fromCodePoint(codepoint) : '\ufffd')
    },
  })
  tokenizer.write(html)
  tokenizer.end()
  return { title: title.replace(/\s+/g, ' ').trim(), text: parts.join('') }
}
