import type { IncomingMessage, ServerResponse } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool } from '../../src/tools/tool'
import { MAX_HTML_NESTING } from '../../src/tools/web/html-depth'
import { type LocalWeb, startLocalWeb } from '../support/local-web'
import { startTestServer, type TestServer } from '../support/server'

// Input nested deeper than a parser recurses ends in a stack overflow; found by a hostile-input audit in
// marked (quotes, lists), linkedom/Readability and structuredClone. Each must be a clear 4xx, never a 500.

/** A tool whose own recursion overflows on deep input, as a real parser does. */
const recursive = defineTool({
  name: 'count_depth',
  title: 'Count depth',
  description: 'Counts how deep an array nests, recursively (test double for a recursive parser).',
  effect: 'read',
  input: z.object({ levels: z.number().int() }),
  output: z.object({ depth: z.number() }),
  run: async ({ levels }) => {
    const descend = (left: number): number => (left === 0 ? 0 : 1 + descend(left - 1))
    return { depth: descend(levels) }
  },
})

describe('deeply nested input', () => {
  let server: TestServer
  let custom: TestServer
  beforeAll(async () => {
    server = await startTestServer()
    custom = await startTestServer({}, { tools: [recursive] })
  })
  afterAll(async () => {
    await server.stop()
    await custom.stop()
  })

  it('turns a stack overflow anywhere in a tool into 413 with a hint, synchronously and as a job', async () => {
    expect((await custom.call('count_depth', { levels: 10 })).body).toEqual({ depth: 10 })
    const overflow = await custom.call('count_depth', { levels: 10_000_000 })
    expect(overflow.status).toBe(413)
    expect(overflow.body).toMatchObject({
      code: 'size_exceeded',
      detail: 'The input nests too deeply to be processed.',
    })
    expect(overflow.body.hint).toMatch(/Flatten/)

    const submitted = await fetch(`${custom.url}/v1/tools/count_depth?async=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ levels: 10_000_000 }),
    })
    expect(submitted.status).toBe(202)
    const statusUrl = submitted.headers.get('location') as string
    let job = await (await fetch(statusUrl)).json()
    for (let attempt = 0; attempt < 100 && !['succeeded', 'failed'].includes(job.status); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      job = await (await fetch(statusUrl)).json()
    }
    expect(job).toMatchObject({ status: 'failed', error: { code: 'size_exceeded', status: 413 } })
  })

  it.each([
    ['quotes 5,000 deep', `${'>'.repeat(5000)} deep`],
    ['a list 1,000 levels deep', Array.from({ length: 1000 }, (_, level) => `${'  '.repeat(level)}- item`).join('\n')],
    ['a 50,000-character emphasis run', `${'*'.repeat(50_000)}a${'*'.repeat(50_000)}`],
    // A line that looks like a fence but is none (a backtick in a backtick fence's info string): marked
    // parses what follows as Markdown, so the guard must measure it too.
    [
      'a list 1,000 levels deep after a line that is no fence',
      ['```a`b', ...Array.from({ length: 1000 }, (_, level) => `${'  '.repeat(level)}- a`)].join('\n'),
    ],
    [
      'a list 1,000 levels deep after a fence left open inside a list item',
      ['- item', '  ```', '- next', ...Array.from({ length: 1000 }, (_, level) => `${'  '.repeat(level)}- a`)].join(
        '\n',
      ),
    ],
    ['10,000 list markers on one line', `${'- '.repeat(10_000)}a`],
    ['quotes and lists nested on one line', `${'> 1. '.repeat(2_000)}a`],
  ])('refuses Markdown with %s in pdf_generation and office_document with 400', async (_label, markdown) => {
    const pdf = await server.call('pdf_generation', { content_type: 'markdown', content: markdown })
    expect(pdf.status, JSON.stringify(pdf.body)).toBe(400)
    expect(pdf.body).toMatchObject({ code: 'validation', field: 'content' })
    const word = await server.call('office_document', { document_type: 'word', content: markdown })
    expect(word.status, JSON.stringify(word.body)).toBe(400)
    expect(word.body.code).toBe('validation')
  })

  it('still renders Markdown nested as deep as documents go', async () => {
    const nested = [
      `${'> '.repeat(8)}a quote eight levels deep`,
      '',
      ...Array.from({ length: 20 }, (_, level) => `${'  '.repeat(level)}- level ${level}`),
      '',
      '```',
      `${' '.repeat(400)}code indented far, inside a fence`,
      '```',
      '',
      '*'.repeat(80),
      '',
      // 64 quote levels, each marker with its space, is as deep as the guard lets through.
      `${'> '.repeat(64)}x`,
      '',
      '```yaml',
      `${' '.repeat(60)}- an item of a deep YAML list, in a fence`,
      '```',
    ].join('\n')
    const pdf = await server.call('pdf_generation', { content_type: 'markdown', content: nested })
    expect(pdf.status, JSON.stringify(pdf.body)).toBe(200)
    const word = await server.call('office_document', { document_type: 'word', content: nested })
    expect(word.status, JSON.stringify(word.body)).toBe(200)
  })
})

// The page of the audit: a short article, then `depth` nested divs. Readability, linkedom and turndown
// recurse per level: 1,000 levels blocked the server for seconds, 100,000 overflowed the stack.
const words = 'word '.repeat(200)
const nested = (depth: number) => `<article><p>${words}</p>${'<div>'.repeat(depth)}x${'</div>'.repeat(depth)}</article>`
const deepPage = nested(100_000)

const fallbackNote = `more than ${MAX_HTML_NESTING} levels deep`

let web: LocalWeb
let server: TestServer

// The held page sends its first half at once and the rest only when the test releases it.
let requested!: () => void
const pageRequested = new Promise<void>((resolve) => {
  requested = resolve
})
let release!: () => void
const pageReleased = new Promise<void>((resolve) => {
  release = resolve
})

describe('web_fetch of deeply nested pages', () => {
  beforeAll(async () => {
    const html = (body: string) => (_request: IncomingMessage, response: ServerResponse) => {
      response.setHeader('content-type', 'text/html; charset=utf-8')
      response.end(body)
    }
    web = await startLocalWeb({
      '/deep': html(deepPage),
      '/deep-held': (_request, response) => {
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        const half = deepPage.length / 2
        response.write(deepPage.slice(0, half))
        requested()
        void pageReleased.then(() => response.end(deepPage.slice(half)))
      },
      '/deep-document': html(
        `<!doctype html><html><head><title>Deep &amp; narrow</title><style>p { color: red }</style></head><body>` +
          `<script>tracker()</script><noscript>Enable JavaScript</noscript><h1>Heading</h1>` +
          `<p>First paragraph &amp; <b>more</b> <a href="/next">text</a></p><ul><li>one<li>two</ul>` +
          `${'<div>'.repeat(MAX_HTML_NESTING + 1)}<p>innermost <i>words</i></p>${'</div>'.repeat(MAX_HTML_NESTING + 1)}` +
          `<p>A &lt;tag&gt; in "text"</p></body></html>`,
      ),
      '/fragment': html(nested(5)),
      // Nests svg contexts without depth: each </div> closes its <svg> implicitly.
      '/svg-contexts': html(`<p>${words}</p>${'<div><svg></div>'.repeat(100_000)}`),
      '/within-limit': html(
        `<!doctype html><html><head><title>Within limit</title></head><body>${nested(MAX_HTML_NESTING - 10)}</body></html>`,
      ),
      // An old page that never closes its paragraphs and list items: long, but only a few levels deep.
      '/unclosed': html(
        `<!doctype html><html><head><title>Old page</title></head><body><article><h1>Old page</h1>${Array.from(
          { length: 400 },
          (_, index) => `<p>Paragraph ${index} of an old page whose paragraphs are never closed, as HTML allows.\n`,
        ).join('')}<ul>${'<li>item '.repeat(MAX_HTML_NESTING + 50)}</ul></article></body></html>`,
      ),
    })
    server = await startTestServer({ TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${web.port}` })
  })
  afterAll(async () => {
    await server?.stop()
    await web?.stop()
  })

  it('reads a bare fragment without <html> or <body>, as browsers do', async () => {
    const result = await server.call('web_fetch', { url: `${web.url}/fragment` })
    expect(result.status).toBe(200)
    expect(result.body.content).toContain(words.trim())
    expect(result.body.hint ?? '').not.toContain(fallbackNote)
  })

  it('returns the text of a page nested 100,000 levels deep, and says it is plain text', async () => {
    const result = await server.call('web_fetch', { url: `${web.url}/deep` })
    expect(result.status).toBe(200)
    expect(result.body).toMatchObject({ status_code: 200, format: 'markdown', truncated: false })
    expect(result.body.content).toContain(words.trim())
    expect(result.body.content).toMatch(/x$/)
    expect(result.body.hint).toContain(fallbackNote)
  })

  it('keeps answering /healthz while such a page is being fetched', async () => {
    let settled = false
    const fetching = server.call('web_fetch', { url: `${web.url}/deep-held` }).finally(() => {
      settled = true
    })
    await pageRequested
    const health = await fetch(`${server.url}/healthz`)
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ status: 'ok' })
    expect(settled).toBe(false)
    release()
    const [result, after] = await Promise.all([fetching, fetch(`${server.url}/healthz`)])
    expect(result.status).toBe(200)
    expect(result.body.content).toContain(words.trim())
    expect(after.status).toBe(200)
  })

  it('reads the text in document order without scripts, styles or noscript, in every format', async () => {
    const text = await server.call('web_fetch', { url: `${web.url}/deep-document`, format: 'text' })
    expect(text.status).toBe(200)
    expect(text.body.title).toBe('Deep & narrow')
    expect(text.body.hint).toContain(fallbackNote)
    expect(text.body.content).toBe(
      'Heading\n\nFirst paragraph & more text\n\none\ntwo\n\ninnermost words\n\nA <tag> in "text"',
    )
    const markdown = await server.call('web_fetch', { url: `${web.url}/deep-document` })
    expect(markdown.body.content).toBe(text.body.content)
    const html = await server.call('web_fetch', { url: `${web.url}/deep-document`, format: 'html' })
    expect(html.body.content).toBe(
      '<p>Heading</p>\n<p>First paragraph &amp; more text</p>\n<p>one</p>\n<p>two</p>\n' +
        '<p>innermost words</p>\n<p>A &lt;tag&gt; in &quot;text&quot;</p>',
    )
  })

  it('reports both the plain-text fallback and a cut', async () => {
    const result = await server.call('web_fetch', { url: `${web.url}/deep`, max_chars: 100 })
    expect(result.status).toBe(200)
    expect(result.body.truncated).toBe(true)
    expect(result.body.content.length).toBeLessThanOrEqual(100)
    expect(result.body.hint).toContain(fallbackNote)
    expect(result.body.hint).toContain('raise max_chars')
  })

  it('reads a page of endless svg contexts as plain text too', async () => {
    const result = await server.call('web_fetch', { url: `${web.url}/svg-contexts` })
    expect(result.status).toBe(200)
    expect(result.body.content).toContain(words.trim())
    expect(result.body.hint).toContain(fallbackNote)
  })

  it('still runs Readability on pages within the limit, however many elements they leave open', async () => {
    const within = await server.call('web_fetch', { url: `${web.url}/within-limit` })
    expect(within.status).toBe(200)
    expect(within.body.title).toBe('Within limit')
    expect(within.body.content).toContain(words.trim())
    expect(within.body.hint).toBeUndefined()

    const unclosed = await server.call('web_fetch', { url: `${web.url}/unclosed`, max_chars: 90_000 })
    expect(unclosed.status).toBe(200)
    expect(unclosed.body.hint).toBeUndefined()
    expect(unclosed.body.content).toContain('Paragraph 399 of an old page')
    // Readability's markdown: paragraphs apart, list items as a markdown list.
    expect(unclosed.body.content).toMatch(/allows\.\n\nParagraph 1 of/)
    expect(unclosed.body.content).toMatch(/^-\s+item$/m)
  })
})
