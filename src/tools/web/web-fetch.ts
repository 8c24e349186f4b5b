import { z } from 'zod'
import { decodeTextBody, parseContentType } from '../../web/content-type'
import { extractReadable } from '../../web/readable'
import { ToolError } from '../errors'
import { cutToJsonBudget } from '../files/text'
import { defineTool } from '../tool'
import { requireHttp } from './http-fetch'

const htmlTypes = new Set(['text/html', 'application/xhtml+xml'])

export const webFetch = defineTool({
  name: 'web_fetch',
  title: 'Read web page',
  description:
    'Fetch a public web page and return its readable main text (article body without navigation or ads) as markdown (links kept), plain text or cleaned HTML, with title and byline.',
  effect: 'external',
  input: z.object({
    url: z.string().min(1).max(8192).describe('Absolute http:// or https:// URL of the page.'),
    format: z.enum(['markdown', 'text', 'html']).default('markdown').describe('Default: markdown.'),
    max_chars: z
      .number()
      .int()
      .min(100)
      .max(90_000)
      .default(20_000)
      .describe('Longest content returned. Default: 20,000.'),
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
  async run(input, { http, signal }) {
    const response = await requireHttp(http).request({
      url: input.url,
      headers: { accept: 'text/html,application/xhtml+xml,text/plain;q=0.8,*/*;q=0.5' },
      timeoutMs: 30_000,
      maxBytes: 5 * 1024 * 1024,
      signal,
    })
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
    const page = isHtml ? extractReadable(body, response.finalUrl) : undefined
    const content = page
      ? input.format === 'html'
        ? page.html
        : input.format === 'text'
          ? page.text
          : page.markdown
      : body
    const cut = cutToJsonBudget(content, input.max_chars)
    const truncated = cut.length < content.length || response.truncated
    return {
      url: input.url,
      final_url: response.finalUrl,
      status_code: response.status,
      title: page?.title ?? '',
      ...(page?.byline ? { byline: page.byline } : {}),
      ...(page?.siteName ? { site_name: page.siteName } : {}),
      format: input.format,
      content: cut,
      length: content.length,
      truncated,
      ...(truncated
        ? { hint: `The content was cut at ${input.max_chars} characters; raise max_chars (up to 90,000) for more.` }
        : {}),
    }
  },
})
