import { Readability } from '@mozilla/readability'
import { parseHTML } from 'linkedom'
import TurndownService from 'turndown'
import { escapeHtml } from '../../core/escape-html'
import { MAX_HTML_NESTING, nestingExceeds } from './html-depth'
import { plainTextOf } from './html-text'

export interface ReadablePage {
  title: string
  byline: string | undefined
  siteName: string | undefined
  /** The main content as HTML, links made absolute, scripts and styles gone. */
  html: string
  text: string
  markdown: string
  /** Set when the page could not go through Readability: one sentence saying what the caller got instead. */
  note?: string
}

function absolutize(html: string, baseUrl: string): string {
  const { document } = parseHTML(`<!doctype html><html><body>${html}</body></html>`)
  for (const [selector, attribute] of [
    ['a[href]', 'href'],
    ['img[src]', 'src'],
  ] as const) {
    for (const element of document.querySelectorAll(selector)) {
      const value = element.getAttribute(attribute) ?? ''
      try {
        const absolute = new URL(value, baseUrl)
        // javascript: and data: links carry nothing a reader needs.
        if (absolute.protocol === 'http:' || absolute.protocol === 'https:')
          element.setAttribute(attribute, absolute.href)
        else element.removeAttribute(attribute)
      } catch {
        element.removeAttribute(attribute)
      }
    }
  }
  return document.body.innerHTML
}

// Class or id tokens of page furniture Readability keeps when it sits inside the article.
const furniture =
  /^(ads?|advert(isement)?|ad-.+|.+-ad|sponsor(ed)?|promo(tion)?|cookie.*|consent.*|newsletter.*|share|social|related)$/i

function removeFurniture(document: ReturnType<typeof parseHTML>['document']): void {
  for (const element of document.querySelectorAll('[class], [id]')) {
    const tokens = `${element.getAttribute('class') ?? ''} ${element.getAttribute('id') ?? ''}`.split(/\s+/)
    if (tokens.some((token) => furniture.test(token))) element.remove()
  }
}

const tooDeep = `The page nests its elements more than ${MAX_HTML_NESTING} levels deep, too deep to find its main text: this is all of its text, without links or formatting.`

/**
 * A page nested too deeply for Readability, linkedom and turndown (they recurse per level, and take
 * depth times size), or too large for them to finish in time: all its text, read in one pass over the
 * markup, as text, markdown and paragraphs. `note` says why the caller got this instead.
 */
export function plainPage(html: string, note = tooDeep): ReadablePage {
  const { title, text } = plainTextOf(html)
  return {
    title,
    byline: undefined,
    siteName: undefined,
    html: text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => `<p>${escapeHtml(line)}</p>`)
      .join('\n'),
    text,
    markdown: text,
    note,
  }
}

/**
 * The readable main text of a page, as Firefox's Reader View finds it (Mozilla Readability); pages
 * it cannot make sense of fall back to their whole body without scripts, styles and navigation, and
 * pages nested deeper than MAX_HTML_NESTING to all their text, found without building a tree.
 */
export function extractReadable(html: string, baseUrl: string): ReadablePage {
  // Measured before anything builds or walks a tree: that work recurses, or grows with depth, per level.
  if (nestingExceeds(html)) return plainPage(html)
  // linkedom builds no <body> for a bare fragment (browsers imply one): Readability and the fallback
  // below would then find nothing.
  const page = /<body[\s>]/i.test(html) ? html : `<!doctype html><html><body>${html}</body></html>`
  const { document } = parseHTML(page)
  const fallbackTitle = (document.querySelector('title')?.textContent ?? '').trim()
  removeFurniture(document)
  const article = new Readability(document as unknown as Document, { charThreshold: 200 }).parse()
  let content = article?.content ?? ''
  if (!content) {
    const { document: whole } = parseHTML(page)
    for (const element of whole.querySelectorAll('script, style, noscript, nav, header, footer, iframe, form'))
      element.remove()
    content = whole.body?.innerHTML ?? ''
  }
  const absolute = absolutize(content, baseUrl)
  const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' })
  turndown.remove(['script', 'style', 'noscript'])
  return {
    title: (article?.title ?? fallbackTitle).trim(),
    byline: article?.byline?.trim() || undefined,
    siteName: article?.siteName?.trim() || undefined,
    html: absolute,
    // Read with the block breaks a browser shows (textContent runs "<h1>A</h1><p>B</p>" into "AB").
    text: plainTextOf(absolute).text,
    markdown: turndown.turndown(absolute).trim(),
  }
}
