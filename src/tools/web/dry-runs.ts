import { z } from 'zod'
import { ToolError } from '../../core/errors'
import { previewOutputFile } from '../../downloads/handoff'
import { OutputPreviewSchema } from '../../downloads/schemas'
import type { HttpClient } from '../../net/http'
import type { DryRunContext } from '../tool'
import { requireHttp } from './require-http'

// The web tools' dry runs: the request as it would be sent and the address rules' verdict on its
// target, without sending anything. A refused target is answered as the call would be (403), so a
// call that cannot succeed never reaches an approver.

export const AddressVerdict = z.object({
  allowed: z.literal(true).describe('A refused address answers 403 instead, as the call would.'),
  address: z.string().optional().describe('The address the request would go to, where the client resolves it.'),
})

export const FetchPreview = z.object({
  request: z.object({
    method: z.string(),
    url: z.string(),
    headers: z.record(z.string(), z.string()).describe('Headers as sent; credential values are masked.'),
    body_bytes: z.number().int(),
    timeout_seconds: z.number().int(),
  }),
  address: AddressVerdict,
})

/** Allowed, with the address the request would go to; a refused target throws the call's 403. */
export async function addressVerdict(http: HttpClient, url: string): Promise<z.output<typeof AddressVerdict>> {
  if (http.resolve) {
    const target = await http.resolve(url)
    return { allowed: true, address: target.address }
  }
  await http.check(url)
  return { allowed: true }
}

const credential = /authorization|cookie|token|secret|api[-_]?key|password/i

/** The headers as name → value, whichever shape the input gave them in, with credentials masked. */
export function maskedHeaders(headers: unknown): Record<string, string> {
  const entries: Array<[string, string]> = Array.isArray(headers)
    ? headers.flatMap((header) =>
        typeof header?.name === 'string' && typeof header?.value === 'string' ? [[header.name, header.value]] : [],
      )
    : Object.entries((headers ?? {}) as Record<string, string>)
  return Object.fromEntries(entries.map(([name, value]) => [name, credential.test(name) ? '***' : value]))
}

interface HttpFetchInput {
  url: string
  method: string
  headers?: unknown
  body?: string | undefined
  timeout_seconds: number
}

export async function httpFetchDryRun(input: HttpFetchInput, context: DryRunContext<'http'>) {
  const http = requireHttp(context.http)
  return {
    request: {
      method: input.method,
      url: input.url,
      headers: maskedHeaders(input.headers),
      body_bytes: new TextEncoder().encode(input.body ?? '').byteLength,
      timeout_seconds: input.timeout_seconds,
    },
    address: await addressVerdict(http, input.url),
  }
}

export const WebFetchPreview = z.object({
  request: z.object({ method: z.literal('GET'), url: z.string(), rendered: z.boolean() }),
  address: AddressVerdict,
  format: z.string(),
  max_chars: z.number().int(),
})

export async function webFetchDryRun(
  input: { url: string; format: string; max_chars: number; render: boolean },
  context: DryRunContext<'http' | 'browser'>,
) {
  const http = requireHttp(context.http)
  if (input.render && !context.browser) {
    throw new ToolError('unavailable', 'No browser is available to render pages on this server.', {
      hint: 'Call web_fetch without render; most pages have their text in the HTML already.',
    })
  }
  return {
    request: { method: 'GET' as const, url: input.url, rendered: input.render },
    address: await addressVerdict(http, input.url),
    format: input.format,
    max_chars: input.max_chars,
  }
}

export const SearchPreview = z.object({
  query: z.string(),
  count: z.number().int(),
  provider: z.string().describe('The search provider the query would be sent to.'),
})

export async function webSearchDryRun(input: { query: string; count: number }, context: DryRunContext<'search'>) {
  if (!context.search) {
    throw new ToolError('unavailable', 'No web search provider is configured on this server.', {
      notOffered: true,
      hint: 'The operator can set TOOLPORT_SEARXNG_URL, TOOLPORT_BRAVE_API_KEY or TOOLPORT_SEARCH_PROVIDER=duckduckgo.',
    })
  }
  return { query: input.query, count: input.count, provider: context.search.name }
}

export const ScreenshotPreview = z.object({
  source: z.object({ url: z.string().optional(), html_chars: z.number().int().optional() }),
  address: AddressVerdict.optional().describe('For a url: the verdict on its address.'),
  output: OutputPreviewSchema,
  page: z.object({ width: z.number().int(), height: z.number().int(), full_page: z.boolean(), format: z.string() }),
})

export async function screenshotDryRun(
  input: {
    url?: string | undefined
    html?: string | undefined
    width: number
    height: number
    full_page: boolean
    format: 'png' | 'jpeg'
    output_path?: string | undefined
  },
  context: DryRunContext<'browser' | 'http' | 'links'>,
) {
  if (!context.browser) {
    throw new ToolError('unavailable', 'No browser is available on this server.', {
      hint: 'screenshot needs Chromium; it is not installed or not enabled here.',
    })
  }
  const address = input.url !== undefined ? await addressVerdict(requireHttp(context.http), input.url) : undefined
  const output = await previewOutputFile(
    { workspace: context.workspace, limits: context.limits, links: context.links },
    {
      outputPath: input.output_path,
      suggestedName: input.url ? new URL(input.url).hostname : 'screenshot',
      extension: input.format === 'jpeg' ? 'jpg' : 'png',
    },
  )
  return {
    source: input.url !== undefined ? { url: input.url } : { html_chars: input.html?.length ?? 0 },
    ...(address ? { address } : {}),
    output,
    page: { width: input.width, height: input.height, full_page: input.full_page, format: input.format },
  }
}

/** "GET example.com/api": the method and where, without the scheme. */
export function requestTitle(method: string, url: string): string {
  const where = url.replace(/^https?:\/\//i, '')
  return `${method} ${where.length > 80 ? `${where.slice(0, 80)}…` : where}`
}
