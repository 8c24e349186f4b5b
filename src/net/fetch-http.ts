import ipaddr from 'ipaddr.js'
import { ToolError } from '../core/errors'
import { cleanRequestHeaders, requestWithRedirects } from './exchange'
import type { HttpClient, HttpRequest, HttpResponse } from './http'
import {
  addressProblem,
  bareHost,
  hostNameProblem,
  isAllowedHost,
  type NetworkPolicy,
  parseTargetUrl,
  refused,
} from './outbound-guard'

/**
 * The outbound client for runtimes that only have fetch (Cloudflare Workers). fetch resolves names
 * itself, so unlike the Node client nothing can pin the connection to a checked address: host names
 * are taken at face value (a name pointing at a private address is NOT caught here; on Workers the
 * request leaves from Cloudflare's edge, which has no route into the operator's network). IP
 * literals, metadata names and localhost are refused, and every redirect hop is checked again.
 */
export interface FetchHttpOptions {
  policy: NetworkPolicy
  userAgent?: string
  /** The fetch to use; tests and runtimes with a bound fetch pass theirs. */
  fetch?: typeof fetch
}

function checkTarget(url: URL, policy: NetworkPolicy): void {
  if (isAllowedHost(url, policy)) return
  const nameProblem = hostNameProblem(url)
  if (nameProblem) throw refused(url.host, nameProblem)
  const host = bareHost(url.hostname)
  // The WHATWG URL parser already turned spellings like 0x7f.1 or 2130706433 into dotted quads.
  if (ipaddr.isValid(host)) {
    const problem = addressProblem(host)
    if (problem) throw refused(url.host, problem)
  }
}

function connectionError(url: URL, cause: unknown): ToolError {
  return new ToolError('connection', `Could not fetch ${url.host}: the connection failed.`, {
    hint: 'Check the URL, or try again later if the site is down.',
    cause,
  })
}

/** Reads at most maxBytes of the (already decompressed) body, then cancels the rest. */
async function readCapped(response: Response, maxBytes: number): Promise<{ body: Uint8Array; truncated: boolean }> {
  if (!response.body) return { body: new Uint8Array(), truncated: false }
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  let truncated = false
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    if (size + value.byteLength > maxBytes) {
      chunks.push(value.subarray(0, maxBytes - size))
      size = maxBytes
      truncated = true
      await reader.cancel().catch(() => {})
      break
    }
    chunks.push(value)
    size += value.byteLength
  }
  const body = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    body.set(chunk, offset)
    offset += chunk.byteLength
  }
  return { body, truncated }
}

function flatHeaders(headers: Headers): Record<string, string> {
  const flat: Record<string, string> = {}
  headers.forEach((value, name) => {
    flat[name] = flat[name] === undefined ? value : `${flat[name]}, ${value}`
  })
  return flat
}

export function createFetchHttpClient(options: FetchHttpOptions): HttpClient {
  const fetchHop = options.fetch ?? fetch
  return {
    async check(url) {
      checkTarget(parseTargetUrl(url), options.policy)
    },
    async request(request: HttpRequest): Promise<HttpResponse> {
      const headers = {
        'user-agent': options.userAgent ?? 'toolport/0.1',
        // fetch negotiates and decodes compression itself.
        ...cleanRequestHeaders(request.headers, ['accept-encoding']),
      }
      return requestWithRedirects<string | Uint8Array>(
        request,
        { headers, body: request.body },
        {
          connectionError,
          async send(hop) {
            checkTarget(hop.url, options.policy)
            const response = await fetchHop(hop.url.href, {
              method: hop.method,
              headers: hop.headers,
              body: hop.body as BodyInit | undefined,
              // Each hop is checked here before it is followed; fetch must not follow on its own.
              redirect: 'manual',
              signal: hop.signal,
            })
            return {
              status: response.status,
              location: response.headers.get('location'),
              headers: () => flatHeaders(response.headers),
              discard: () => response.body?.cancel().catch(() => {}),
              read: (maxBytes) => readCapped(response, maxBytes),
            }
          },
        },
      )
    },
  }
}
