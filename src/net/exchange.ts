import { isToolError, ToolError } from '../core/errors'
import type { HttpRequest, HttpResponse } from './http'
import { parseTargetUrl } from './outbound-guard'
import { nextHop } from './redirects'

/**
 * What both HTTP clients (Node's pinned one, and fetch on Workers) share: the caller's headers made
 * safe, and the request loop — the deadline, one checked hop at a time, redirects by nextHop(), the
 * body read up to its cap, and failures turned into ToolErrors. A client supplies only how one hop
 * goes over the wire. Portable: no Node imports.
 */

// Never forwarded from the caller: they describe this hop, not the request, or would let a caller
// steer the connection itself.
const hopByHop = [
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
]

// RFC 9110 field-value: visible ASCII, spaces, tabs and obs-text bytes (0x80-0xFF), which Node's client
// (and fetch's ByteString) accept; anything else (controls, characters past U+00FF) they throw on, and
// that must be the caller's 400, not a failed connection.
const headerNamePattern = /^[!#$%&'*+.^_`|~0-9a-z-]+$/
const headerValuePattern = /^[\t\x20-\x7e\x80-\xff]*$/

function invalidHeader(name: string, reason: string, hint: string): ToolError {
  return new ToolError('validation', `Header ${JSON.stringify(name.slice(0, 100))} ${reason}.`, {
    hint,
    details: { field: 'headers', header: name.slice(0, 100) },
  })
}

/** The caller's headers with lower-case names, without hop-by-hop ones (and `alsoDropped`); invalid ones refused. */
export function cleanRequestHeaders(
  headers: Record<string, string> | undefined,
  alsoDropped: readonly string[] = [],
): Record<string, string> {
  const dropped = new Set([...hopByHop, ...alsoDropped])
  const clean: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers ?? {})) {
    const lower = name.toLowerCase()
    if (!headerNamePattern.test(lower)) {
      throw invalidHeader(
        name,
        'is not a valid HTTP header name',
        'Header names are tokens such as "Accept" or "X-Api-Key".',
      )
    }
    if (!headerValuePattern.test(value)) {
      throw invalidHeader(
        name,
        'has a value HTTP cannot carry',
        'Header values may hold printable characters up to U+00FF, spaces and tabs, but no line breaks or other control characters: percent-encode or base64 anything else.',
      )
    }
    if (!dropped.has(lower)) clean[lower] = value
  }
  return clean
}

/** One hop to send: its target is checked by the client before anything leaves. */
export interface Hop<Body> {
  url: URL
  method: string
  headers: Record<string, string>
  /** undefined for GET and HEAD, and once a redirect turned the request into a GET. */
  body: Body | undefined
  signal: AbortSignal
}

/** The answer to one hop, as far as it was read. */
export interface Exchange {
  status: number
  location: string | null | undefined
  headers(): Record<string, string>
  /** Throws a redirect's body away. */
  discard(): void | Promise<void>
  /** Reads at most maxBytes of the decoded body and releases the rest. */
  read(maxBytes: number): Promise<{ body: Uint8Array; truncated: boolean }>
}

export interface ExchangeClient<Body> {
  /** Checks the hop's target (throwing ToolErrors) and sends it. */
  send(hop: Hop<Body>): Promise<Exchange>
  connectionError(url: URL, cause: unknown): ToolError
}

export async function requestWithRedirects<Body>(
  request: HttpRequest,
  first: { headers: Record<string, string>; body: Body | undefined },
  client: ExchangeClient<Body>,
): Promise<HttpResponse> {
  const timeoutMs = request.timeoutMs ?? 30_000
  const deadline = AbortSignal.timeout(timeoutMs)
  const signal = request.signal ? AbortSignal.any([request.signal, deadline]) : deadline
  const maxRedirects = Math.min(request.maxRedirects ?? 5, 5)
  const { headers } = first
  let url = parseTargetUrl(request.url)
  let method: string = request.method ?? 'GET'
  let body = first.body
  try {
    for (let redirects = 0; ; redirects++) {
      let response: Exchange
      try {
        response = await client.send({
          url,
          method,
          headers,
          body: method === 'GET' || method === 'HEAD' ? undefined : body,
          signal,
        })
      } catch (error) {
        if (signal.aborted || isToolError(error)) throw error
        throw client.connectionError(url, error)
      }
      const hop = nextHop(
        { url, method },
        { status: response.status, location: response.location },
        headers,
        redirects,
        maxRedirects,
        request.secretHeaders,
      )
      if (hop) {
        await response.discard()
        url = hop.url
        method = hop.method
        if (hop.dropBody) body = undefined
        continue
      }
      const read =
        method === 'HEAD'
          ? { body: new Uint8Array(), truncated: false }
          : await response.read(request.maxBytes ?? 1024 * 1024)
      return { status: response.status, headers: response.headers(), ...read, finalUrl: url.href, redirects }
    }
  } catch (error) {
    if (isToolError(error)) throw error
    if (deadline.aborted) {
      throw new ToolError('timeout', `No complete answer from ${url.host} within ${timeoutMs} ms.`, {
        hint: 'Raise timeout_seconds, or try a faster or smaller resource.',
      })
    }
    if (request.signal?.aborted) throw request.signal.reason
    throw client.connectionError(url, error)
  }
}
