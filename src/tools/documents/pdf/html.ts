import { Marked, type Tokens } from 'marked'
import { escapeHtml } from '../../../core/escape-html'
import { assertMarkdownNesting } from '../markdown-limits'

/**
 * HTML for Chromium. Markdown goes through marked with raw HTML escaped (marked passes <script>
 * through as is) and only http(s), mailto and in-page links kept; images only as data: URIs, the
 * one scheme the page may load. The browser adds its own fences (no JavaScript, no requests).
 */

const safeLink = /^(https?:|mailto:|#)/i
const safeImage = /^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]+$/i

export function markdownToHtml(markdown: string): string {
  assertMarkdownNesting(markdown)
  const marked = new Marked({
    gfm: true,
    async: false,
    renderer: {
      html(token: Tokens.HTML | Tokens.Tag) {
        return escapeHtml(token.text)
      },
      link(token: Tokens.Link) {
        const text = this.parser.parseInline(token.tokens)
        return safeLink.test(token.href) ? `<a href="${escapeHtml(token.href)}">${text}</a>` : text
      },
      image(token: Tokens.Image) {
        return safeImage.test(token.href)
          ? `<img src="${escapeHtml(token.href)}" alt="${escapeHtml(token.text)}">`
          : escapeHtml(token.text)
      },
    },
  })
  return marked.parse(markdown) as string
}

const pageStyle = `
  /* A word or URL wider than the line wraps instead of running off the page, where it was cut. */
  body { font-family: 'DejaVu Sans', 'Liberation Sans', Arial, sans-serif; font-size: 10.5pt; line-height: 1.45; color: #222; overflow-wrap: anywhere; }
  h1, h2, h3, h4, h5, h6 { color: #1F3864; line-height: 1.2; break-after: avoid; }
  h1 { font-size: 20pt; border-bottom: 1.5px solid #2E75B6; padding-bottom: 3px; }
  h2 { font-size: 16pt; border-bottom: 0.5px solid #2E75B6; padding-bottom: 2px; }
  h3 { font-size: 13.5pt; }
  a { color: #2E75B6; }
  code { font-family: 'DejaVu Sans Mono', monospace; font-size: 9pt; background: #F3F4F6; padding: 0 2px; }
  pre { background: #F3F4F6; padding: 8px; white-space: pre-wrap; word-break: break-word; }
  pre code { background: none; padding: 0; }
  blockquote { border-left: 3px solid #2E75B6; margin-left: 0; padding-left: 12px; color: #444; }
  table { border-collapse: collapse; width: 100%; margin: 8px 0; }
  th, td { border: 0.6px solid #BFBFBF; padding: 4px 6px; text-align: left; vertical-align: top; }
  th { background: #1F3864; color: #fff; }
  tr:nth-child(even) td { background: #F2F5FA; }
  tr { break-inside: avoid; }
  thead { display: table-header-group; }
  img { max-width: 100%; }
`

export function markdownDocument(markdown: string, title: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><style>${pageStyle}</style></head><body>${markdownToHtml(markdown)}</body></html>`
}
