import { headings, tokenize } from './html-tokens'

/**
 * The deepest element nesting a page may have for Readability, linkedom's tree operations and turndown.
 * They recurse once per level, and their work grows with depth times size (htmlparser2's own stack is an
 * array shifted at its front): an 11 KB page nested 1,000 levels deep kept the event loop busy for 8 s,
 * and one nested 100,000 levels deep overflowed the stack. Real pages stay well under 100 levels
 * (Chromium's parser stops nesting at 512), so 256 turns away no real page while bounding the recursion
 * and the extra work per byte that depth brings.
 */
export const MAX_HTML_NESTING = 256

// The tree rules of htmlparser2's Parser (10.x), which linkedom follows: which open tags close which open
// elements, which elements never have children, and where `<x/>` closes itself (in svg and math only).
const pTag = ['p']
const formTags = ['input', 'option', 'optgroup', 'select', 'button', 'datalist', 'textarea']
const openImpliesClose = new Map<string, ReadonlySet<string>>(
  (
    [
      ['tr', ['tr', 'th', 'td']],
      ['th', ['th']],
      ['td', ['thead', 'th', 'td']],
      ['body', ['head', 'link', 'script']],
      ['li', ['li']],
      ['select', formTags],
      ['input', formTags],
      ['output', formTags],
      ['button', formTags],
      ['datalist', formTags],
      ['textarea', formTags],
      ['option', ['option']],
      ['optgroup', ['optgroup', 'option']],
      ['dd', ['dd', 'dt']],
      ['dt', ['dd', 'dt']],
      ['rt', ['rt', 'rp']],
      ['rp', ['rt', 'rp']],
      ['tbody', ['thead', 'tbody']],
      ['tfoot', ['thead', 'tbody']],
      ...[
        'p',
        ...headings,
        'address',
        'article',
        'aside',
        'blockquote',
        'details',
        'div',
        'dl',
        'fieldset',
        'figcaption',
        'figure',
        'footer',
        'form',
        'header',
        'hr',
        'main',
        'nav',
        'ol',
        'pre',
        'section',
        'table',
        'ul',
      ].map((name) => [name, pTag] as const),
    ] as Array<readonly [string, string[]]>
  ).map(([name, closes]) => [name, new Set(closes)]),
)
const voidElements = new Set([
  'area',
  'base',
  'basefont',
  'br',
  'col',
  'command',
  'embed',
  'frame',
  'hr',
  'img',
  'input',
  'isindex',
  'keygen',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
])
const foreignElements = new Set(['math', 'svg'])
const integrationElements = new Set([
  'mi',
  'mo',
  'mn',
  'ms',
  'mtext',
  'annotation-xml',
  'foreignobject',
  'desc',
  'title',
])

/**
 * Whether the tree linkedom would build from `html` is nested more than `limit` levels deep, found in one
 * pass over the markup with no recursion. It replays htmlparser2's Parser on a stack of its own, and stops
 * as soon as the limit is passed, so the stack never holds more than `limit + 1` names, and every name is
 * pushed and popped once: the pass is linear in the page's length however deep the page is.
 *
 * The Parser also keeps a stack of svg/math contexts that an implied close does not pop: a page repeating
 * `<div><svg></div>` grows it without any depth, and the Parser's shift/unshift on it then make parsing
 * quadratic. That stack counts as nesting here too.
 */
export function nestingExceeds(html: string, limit: number = MAX_HTML_NESTING): boolean {
  // Top of each stack at the end (the Parser keeps its tops at index 0).
  const stack: string[] = []
  // How often each name is on the stack: a close tag of nothing open costs no search.
  const open = new Map<string, number>()
  const pop = () => {
    const name = stack.pop() as string
    open.set(name, (open.get(name) ?? 1) - 1)
  }
  const foreign: boolean[] = [false]
  let tagname = ''
  let exceeded = false
  const tokenizer = tokenize({
    onopentagname(start, end) {
      openTag(html.slice(start, end).toLowerCase())
    },
    onopentagend() {
      tagname = ''
    },
    onselfclosingtag() {
      // In svg or math `<x/>` is closed at once; in HTML the slash means nothing.
      if (foreign[foreign.length - 1] && stack[stack.length - 1] === tagname) pop()
      tagname = ''
    },
    onclosetag(start, end) {
      const name = html.slice(start, end).toLowerCase()
      if (foreignElements.has(name) || integrationElements.has(name)) foreign.pop()
      if (voidElements.has(name)) {
        // A </br> is read as <br>.
        if (name === 'br') openTag('br')
        tagname = ''
        return
      }
      if ((open.get(name) ?? 0) > 0) {
        // Closes every element opened after it; each name is popped once, so this stays linear.
        while (stack[stack.length - 1] !== name) pop()
        pop()
      } else if (name === 'p') {
        // A stray </p> is an empty <p></p>, which may close what <p> closes.
        openTag('p')
        if (stack[stack.length - 1] === 'p') pop()
        tagname = ''
      }
    },
  })

  function openTag(name: string): void {
    tagname = name
    const closes = openImpliesClose.get(name)
    if (closes) while (stack.length > 0 && closes.has(stack[stack.length - 1] as string)) pop()
    // A void element is a level of the tree too, though it never holds another.
    const depth = stack.length + 1
    if (!voidElements.has(name)) {
      stack.push(name)
      open.set(name, (open.get(name) ?? 0) + 1)
      if (foreignElements.has(name)) foreign.push(true)
      else if (integrationElements.has(name)) foreign.push(false)
    }
    if (depth > limit || foreign.length > limit + 1) {
      exceeded = true
      tokenizer.pause()
    }
  }

  tokenizer.write(html)
  return exceeded
}
