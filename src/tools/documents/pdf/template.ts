import { escapeHtml } from '../../../core/escape-html'

// Apart from html.ts: pdf_generation's run sanitizes templates before any page is made, and marked
// (html.ts) loads only for a Markdown page.

const allowedTags = new Set([
  'span',
  'div',
  'p',
  'b',
  'i',
  'u',
  'strong',
  'em',
  'small',
  'br',
  'sup',
  'sub',
  'table',
  'tbody',
  'tr',
  'td',
  'th',
])
const droppedWithContent =
  /<(script|style|iframe|object|embed|svg|math|template|noscript|textarea|title)\b[\s\S]*?(<\/\1\s*>|$)/gi

function cleanAttributes(attributes: string): string {
  const kept: string[] = []
  for (const match of attributes.matchAll(/([a-zA-Z-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) {
    const name = (match[1] as string).toLowerCase()
    const value = match[2] ?? match[3] ?? ''
    if (name === 'class' && /^[A-Za-z0-9 _-]*$/.test(value)) kept.push(`class="${value}"`)
    // No url(), @import, escapes or expressions: a style must not be able to name a resource.
    if (name === 'style' && !/url\s*\(|@import|expression|\\|image-set|&/i.test(value))
      kept.push(`style="${escapeHtml(value)}"`)
  }
  return kept.length > 0 ? ` ${kept.join(' ')}` : ''
}

/**
 * Header and footer templates are rendered by Chromium's print compositor, outside the page whose
 * requests are intercepted, so they are reduced to a few inline tags with class and safe style only.
 */
export function sanitizeTemplate(template: string): string {
  const withoutActive = template.replace(/<!--[\s\S]*?(-->|$)/g, '').replace(droppedWithContent, '')
  let output = ''
  let last = 0
  for (const match of withoutActive.matchAll(/<(\/?)([a-zA-Z][a-zA-Z0-9]*)([^<>]*)>/g)) {
    output += escapeHtml(withoutActive.slice(last, match.index)).replace(/&amp;(#?\w+;)/g, '&$1')
    last = (match.index as number) + match[0].length
    const tag = (match[2] as string).toLowerCase()
    if (!allowedTags.has(tag)) continue
    output += match[1] ? `</${tag}>` : `<${tag}${cleanAttributes(match[3] as string)}>`
  }
  output += escapeHtml(withoutActive.slice(last)).replace(/&amp;(#?\w+;)/g, '&$1')
  return output
}
