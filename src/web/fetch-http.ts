import ipaddr from 'ipaddr.js'
import { isToolError, ToolError } from '../tools/errors'
import type { HttpClient, HttpRequest, HttpResponse } from './http'
import { nextHop } from './redirects'
import {
  addressProblem,
  bareHost,
  hostNameProblem,
  isAllowedHost,
  type NetworkPolicy,
  parseTargetUrl,
  refused,
} from './ssrf'

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

// Describe this hop, not the request, or would let a caller steer the connection itself.
const hopByHop = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'host',
  'content-length',
  'proxy-authorization',
  'expect',
  'accept-encoding',
])

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

function cleanHeaders(headers: Record<string, string> | undefined): Record<string, string> {
  const clean: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers ?? {})) {
    const lower = name.toLowerCase()
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(lower) || /[\r\n\0]/.test(value)) {
      throw new ToolError('validation', `Header ${JSON.stringify(name.slice(0, 100))} is not a valid HTTP header.`, {
        hint: 'Header names are tokens such as "Accept"; values may not contain line breaks.',
        details: { field: 'headers' },
      })
    }
    if (!hopByHop.has(lower)) clean[lower] = value
  }
  return clean
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
  const send = options.fetch ?? fetch
  return {
    async check(url) {
      checkTarget(parseTargetUrl(url), options.policy)
    },
    async request(request: HttpRequest): Promise<HttpResponse> {
      const timeoutMs = request.timeoutMs ?? 30_000
      const deadline = AbortSignal.timeout(timeoutMs)
      const signal = request.signal ? AbortSignal.any([request.signal, deadline]) : deadline
      const maxRedirects = Math.min(request.maxRedirects ?? 5, 5)
      let url = parseTargetUrl(request.url)
      let method: string = request.method ?? 'GET'
      let body: string | Uint8Array | undefined = request.body
      const headers: Record<string, string> = {
        'user-agent': options.userAgent ?? 'toolport/0.1',
        ...cleanHeaders(request.headers),
      }
      try {
        for (let redirects = 0; ; redirects++) {
          checkTarget(url, options.policy)
          let response: Response
          try {
            response = await send(url.href, {
              method,
              headers,
              body: method === 'GET' || method === 'HEAD' ? undefined : (body as BodyInit | undefined),
              // Each hop is checked here before it is followed; fetch must not follow on its own.
              redirect: 'manual',
              signal,
            })
          } catch (error) {
            if (signal.aborted) throw error
            throw connectionError(url, error)
          }
          const hop = nextHop(
            { url, method },
            { status: response.status, location: response.headers.get('location') },
            headers,
            redirects,
            maxRedirects,
          )
          if (hop) {
            await response.body?.cancel().catch(() => {})
            url = hop.url
            method = hop.method
            if (hop.dropBody) body = undefined
            continue
          }
          const read =
            method === 'HEAD'
              ? { body: new Uint8Array(), truncated: false }
              : await readCapped(response, request.maxBytes ?? 1024 * 1024)
          return {
            status: response.status,
            headers: flatHeaders(response.headers),
            ...read,
            finalUrl: url.href,
            redirects,
          }
        }
      } catch (error) {
        if (isToolError(error)) throw error
        if (deadline.aborted) {
          throw new ToolError('timeout', `No complete answer from ${url.host} within ${timeoutMs} ms.`, {
            hint: 'Raise timeout_seconds, or try a faster or smaller resource.',
          })
        }
        if (request.signal?.aborted) throw request.signal.reason
        throw connectionError(url, error)
      }
    },
  }
}
