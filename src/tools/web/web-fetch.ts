import { z } from 'zod'
import { ToolError } from '../../core/errors'
import { decodeTextBody, parseContentType } from '../../net/content-type'
import { cutToJsonBudget } from '../files/text'
import { offloaded } from '../offload'
import { defineTool, type ToolContext } from '../tool'
import { WebFetchPreview, webFetchDryRun } from './dry-runs'
import type { ReadablePage } from './readable'
import { requireHttp } from './require-http'
import { webTasks } from './tasks'

const htmlTypes = new Set(['text/html', 'application/xhtml+xml'])

export const webFetch = defineTool({
  name: 'web_fetch',
  title: 'Read web page',
  description:
    'Fetch a public web page and return its readable main text (article body without navigation or ads) as markdown (links kept), plain text or cleaned HTML, with title and byline.',
  // A read of the public web (as in the reference systems): it changes nothing, so it is not held for
  // approval as external tools are; it still reaches outside the service.
  effect: 'read',
  uses: ['http', 'browser', 'offload'],
  // A GET: fetching again changes nothing.
  hints: { idempotent: true, openWorld: true },
  input: z.strictObject({
    url: z.string().min(1).max(8192).describe('Absolute http:// or https:// URL of the page.'),
    format: z.enum(['markdown', 'text', 'html']).default('markdown').describe('Default: markdown.'),
    max_chars: z
      .number()
      .int()
      .min(100)
      .max(90_000)
      .default(20_000)
      .describe('Longest content returned. Default: 20,000.'),
    render: z
      .boolean()
      .default(false)
      .describe('Run the page in a browser first, for sites that build their content with JavaScript. Slower.'),
  }),
  output: z.object({
    url: z.string(),
    final_url: z.string(),
    status_code: z.number().int(),
    title: z.string(),
    byline: z.string().optional(),
    site_name: z.string().optional(),
    format: z.enum(['markdown', 'text', 'html']),
    content: z.string(),
    length: z.number().int().describe('Characters of the whole extracted content.'),
    truncated: z.boolean(),
    hint: z.string().optional(),
  }),
  callTitle: (input) => `Read ${input.url.replace(/^https?:\/\//i, '').slice(0, 80)}`,
  dryRun: webFetchDryRun,
  preview: WebFetchPreview,
  async run(input, { http, browser, signal, offload, account }) {
    if (input.render) {
      if (!browser) {
        throw new ToolError('unavailable', 'No browser is available to render pages on this server.', {
          hint: 'Call web_fetch without render; most pages have their text in the HTML already.',
        })
      }
      const client = requireHttp(http)
      await client.check(input.url)
      const rendered = await browser.renderPage(input.url, (url) => client.check(url), signal)
      return shape(
        input,
        await readPage(rendered.html, rendered.finalUrl, { offload, signal }),
        rendered.finalUrl,
        200,
        false,
      )
    }
    const response = await requireHttp(http).request({
      url: input.url,
      headers: { accept: 'text/html,application/xhtml+xml,text/plain;q=0.8,*/*;q=0.5' },
      timeoutMs: 30_000,
      maxBytes: 5 * 1024 * 1024,
      signal,
    })
    account?.used({ fetchBytesIn: response.body.length })
    const contentType = response.headers['content-type']
    const body = decodeTextBody(response.body, contentType)
    if (body === undefined) {
      throw new ToolError(
        'validation',
        `${response.finalUrl} is not a web page (${parseContentType(contentType).mediaType || 'binary'}).`,
        {
          hint: 'Use http_fetch for files and APIs; web_fetch reads HTML and text pages.',
          details: { field: 'url' },
        },
      )
    }
    const isHtml = htmlTypes.has(parseContentType(contentType).mediaType) || /^\s*<(!doctype html|html)/i.test(body)
    const page = isHtml ? await readPage(body, response.finalUrl, { offload, signal }) : { raw: body }
    return shape(input, page, response.finalUrl, response.status, response.truncated)
  },
})

// Longest the extraction of one page may take before its plain text is returned instead.
const readPageTimeoutMs = 15_000

/**
 * The readable text of an HTML page, extracted off the event loop (offload). Pages too deeply nested for
 * Readability are read as plain text before it runs, and so are pages it cannot finish in time; should a
 * stack overflow (or a string too long) still escape, the caller gets a 413 naming the page instead of an
 * internal error.
 */
async function readPage(
  html: string,
  url: string,
  { offload, signal }: Pick<ToolContext<'offload'>, 'offload' | 'signal'>,
): Promise<ReadablePage> {
  try {
    return await offloaded(offload, webTasks, 'read-page', { html, url }, { signal, timeoutMs: readPageTimeoutMs })
  } catch (error) {
    if (error instanceof ToolError && error.code === 'timeout' && !signal.aborted) {
      const note = `The page is too large or complex to find its main text within ${readPageTimeoutMs / 1000} s: this is all of its text, without links or formatting.`
      return offloaded(offload, webTasks, 'plain-page', { html, note }, { signal })
    }
    if (!(error instanceof RangeError)) throw error
    throw new ToolError('size_exceeded', `${url} is too large or too deeply nested to extract its text.`, {
      hint: 'Use http_fetch to read the page as it is.',
      details: { field: 'url' },
      cause: error,
    })
  }
}

type Input = { url: string; format: 'markdown' | 'text' | 'html'; max_chars: number }

/** The answer for an extracted page (or a plain-text body), cut to max_chars. */
function shape(input: Input, page: ReadablePage | { raw: string }, finalUrl: string, status: number, bodyCut: boolean) {
  const readable = 'raw' in page ? undefined : page
  const content = readable
    ? input.format === 'html'
      ? readable.html
      : input.format === 'text'
        ? readable.text
        : readable.markdown
    : (page as { raw: string }).raw
  const cut = cutToJsonBudget(content, input.max_chars)
  const truncated = cut.length < content.length || bodyCut
  const hints = [
    readable?.note,
    truncated ? `The content was cut at ${input.max_chars} characters; raise max_chars (up to 90,000) for more.` : '',
  ].filter(Boolean)
  return {
    url: input.url,
    final_url: finalUrl,
    status_code: status,
    title: readable?.title ?? '',
    ...(readable?.byline ? { byline: readable.byline } : {}),
    ...(readable?.siteName ? { site_name: readable.siteName } : {}),
    format: input.format,
    content: cut,
    length: content.length,
    truncated,
    ...(hints.length > 0 ? { hint: hints.join(' ') } : {}),
  }
}
