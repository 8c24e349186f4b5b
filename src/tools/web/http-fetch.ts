import { z } from 'zod'
import { decodeTextBody, toBase64 } from '../../net/content-type'
import { cutToJsonBudget } from '../files/text'
import { defineTool } from '../tool'
import { FetchPreview, httpFetchDryRun, requestTitle } from './dry-runs'
import { requireHttp } from './require-http'

const responseOverhead = 2_000

/** Headers given as a list become the map the client sends; a repeated name is joined as HTTP does. */
function headerMap(headers: Record<string, string> | Array<{ name: string; value: string }>): Record<string, string> {
  if (!Array.isArray(headers)) return headers
  const map: Record<string, string> = {}
  for (const { name, value } of headers) {
    const key = Object.keys(map).find((existing) => existing.toLowerCase() === name.toLowerCase()) ?? name
    map[key] = map[key] === undefined ? value : `${map[key]}, ${value}`
  }
  return map
}

export const httpFetch = defineTool({
  name: 'http_fetch',
  title: 'HTTP request',
  description:
    'Send one HTTP request (GET, POST, PUT, PATCH, DELETE, HEAD) to a public URL and return status, headers and body (text, or base64 for binary). Private and metadata addresses are refused.',
  effect: 'external',
  uses: ['http'],
  // A PUT or DELETE may change or remove what the URL holds.
  hints: { destructive: true },
  // GET and HEAD read the web, as web_fetch does: the approval policy weighs them as reads. The methods
  // that send something stay external.
  callEffect: (input) => {
    const method = (input as { method?: unknown } | null)?.method ?? 'GET'
    return method === 'GET' || method === 'HEAD' ? 'read' : 'external'
  },
  input: z.strictObject({
    url: z.string().min(1).max(8192).describe('Absolute http:// or https:// URL.'),
    method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD']).default('GET').describe('Default: GET.'),
    headers: z
      .union([
        z
          .record(z.string().max(256), z.string().max(8192))
          .refine((headers) => Object.keys(headers).length <= 64, 'at most 64 headers'),
        // The same as a list: the shape OpenAI's strict mode can express (it has no free-form maps).
        z.array(z.strictObject({ name: z.string().min(1).max(256), value: z.string().max(8192) })).max(64),
      ])
      .optional()
      .describe(
        'Request headers, as an object { name: value } or a list [{ name, value }]. Credentials you put here go to this URL only, never to a redirect elsewhere.',
      ),
    body: z
      .string()
      .max(1024 * 1024)
      .optional()
      .describe('Request body (for POST, PUT, PATCH, DELETE).'),
    timeout_seconds: z
      .number()
      .int()
      .min(1)
      .max(300)
      .default(30)
      .describe('Whole-request deadline, 1-300 s. Default: 30.'),
    max_bytes: z
      .number()
      .int()
      .min(1)
      .max(10 * 1024 * 1024)
      .default(1024 * 1024)
      .describe('Bytes of the response body to read. Default: 1 MiB.'),
  }),
  output: z.object({
    status_code: z.number().int(),
    headers: z.record(z.string(), z.string()),
    body: z.string().describe('The body as text, or base64 when body_encoding is base64.'),
    body_encoding: z.enum(['text', 'base64']),
    truncated: z.boolean().describe('True when the body was longer than what is returned.'),
    final_url: z.string().describe('The URL that answered, after redirects.'),
    hint: z.string().optional(),
  }),
  callTitle: (input) => requestTitle(input.method, input.url),
  dryRun: httpFetchDryRun,
  preview: FetchPreview,
  async run(input, { http, limits, signal, account }) {
    const response = await requireHttp(http).request({
      url: input.url,
      method: input.method,
      ...(input.headers ? { headers: headerMap(input.headers) } : {}),
      ...(input.body !== undefined ? { body: input.body } : {}),
      timeoutMs: input.timeout_seconds * 1000,
      maxBytes: input.max_bytes,
      signal,
    })
    account?.used({
      fetchBytesOut: input.body === undefined ? 0 : new TextEncoder().encode(input.body).length,
      fetchBytesIn: response.body.length,
    })
    const headerText = JSON.stringify(response.headers).length
    const budget = limits.maxResponseChars - responseOverhead - headerText - response.finalUrl.length
    const text = decodeTextBody(response.body, response.headers['content-type'])
    const full = text ?? toBase64(response.body)
    const body = text === undefined ? full.slice(0, Math.max(0, budget - (budget % 4))) : cutToJsonBudget(full, budget)
    const truncated = response.truncated || body.length < full.length
    return {
      status_code: response.status,
      headers: response.headers,
      body,
      body_encoding: text === undefined ? ('base64' as const) : ('text' as const),
      truncated,
      final_url: response.finalUrl,
      ...(truncated ? { hint: 'The body was cut; ask for less (a Range header or a narrower API query).' } : {}),
    }
  },
})
