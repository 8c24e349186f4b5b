import { ToolError } from '../core/errors'

/**
 * Chromium's HTML parser stops nesting at 512 elements (kMaximumHTMLParserDOMTreeDepth) and makes the
 * rest siblings at that depth: such a page does not render as written, and laying it out costs far
 * more than its size (100,000 nested <div>s rendered until the 30 s deadline; 20,000 took 3 s).
 */
export const maxHtmlNesting = 512

// Elements with no content, and those whose end tag may be left out (HTML's optional end tags): they
// do not nest when written the usual way (<li>a<li>b, <p>one<p>two), so they are not counted.
const notNesting = new Set(
  [
    'area base br col embed hr img input link meta source track wbr param keygen',
    'p li dt dd tr td th option optgroup rt rp thead tbody tfoot colgroup caption html head body',
  ]
    .join(' ')
    .split(' '),
)
// Elements whose content is text up to their own end tag.
const rawText = new Set(['script', 'style', 'textarea', 'title', 'xmp', 'iframe', 'noembed', 'noframes', 'plaintext'])

/**
 * Refuses HTML that nests elements deeper than Chromium builds, before a browser spends its render
 * deadline on it. One linear pass over the tags: comments and raw text skipped, an end tag closing
 * up to its matching start tag (an unclosed <b> inside a closed <div> ends with it).
 */
export function assertHtmlNesting(html: string, field: string): void {
  const open: string[] = []
  // A tag ends at the first ">" and holds no "<": never a rescan past the next tag, so linear in the
  // input. A quoted ">" in an attribute ends it early; that only counts less, never more.
  const tags = /<!--|<(\/?)([A-Za-z][A-Za-z0-9-]*)[^<>]*>/g
  const ends = new Map<string, RegExp>()
  for (let match = tags.exec(html); match; match = tags.exec(html)) {
    const [whole, closing, rawName] = match
    if (rawName === undefined) {
      const end = html.indexOf('-->', tags.lastIndex)
      tags.lastIndex = end < 0 ? html.length : end + 3
      continue
    }
    const name = rawName.toLowerCase()
    if (closing) {
      const at = open.lastIndexOf(name)
      if (at >= 0) open.length = at
      continue
    }
    if (rawText.has(name)) {
      const end = ends.get(name) ?? new RegExp(`</${name}`, 'gi')
      ends.set(name, end)
      end.lastIndex = tags.lastIndex
      tags.lastIndex = end.test(html) ? end.lastIndex : html.length
      continue
    }
    if (notNesting.has(name) || whole.endsWith('/>')) continue
    open.push(name)
    if (open.length > maxHtmlNesting) {
      throw new ToolError('validation', `The HTML nests elements more than ${maxHtmlNesting} levels deep.`, {
        hint: `Browsers build at most ${maxHtmlNesting} levels (deeper elements lose their nesting); flatten the deepest elements, or close the tags left open, and send it again.`,
        details: { field },
      })
    }
  }
}
