import { lookup as dnsLookup } from 'node:dns/promises'
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import type { LookupFunction } from 'node:net'
import { pipeline, type Readable } from 'node:stream'
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib'
import ipaddr from 'ipaddr.js'
import { ToolError } from '../core/errors'
import { cleanRequestHeaders, requestWithRedirects } from './exchange'
import type { HttpClient, HttpRequest, HttpResponse, ResolvedTarget } from './http'
import {
  addressProblem,
  bareHost,
  hostNameProblem,
  isAllowedHost,
  type NetworkPolicy,
  parseTargetUrl,
  refused,
} from './outbound-guard'

export type Resolver = (host: string) => Promise<Array<{ address: string; family: number }>>

export interface NodeHttpOptions {
  policy: NetworkPolicy
  /** DNS resolution; tests inject answers that change between lookups. */
  resolve?: Resolver
  userAgent?: string
}

type PinnedTarget = ResolvedTarget

const defaultResolver: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true })

function connectionError(url: URL, error: unknown): ToolError {
  const code = (error as NodeJS.ErrnoException).code ?? ''
  const reason =
    code === 'ENOTFOUND' || code === 'EAI_AGAIN'
      ? 'the host name does not resolve'
      : code === 'ECONNREFUSED'
        ? 'the connection was refused'
        : code.startsWith('ERR_TLS') || code.includes('CERT')
          ? 'the TLS certificate was not accepted'
          : 'the connection failed'
  return new ToolError('connection', `Could not fetch ${url.host}: ${reason}.`, {
    hint: 'Check the URL, or try again later if the site is down.',
    cause: error,
  })
}

async function pin(url: URL, options: NodeHttpOptions): Promise<PinnedTarget> {
  const allowed = isAllowedHost(url, options.policy)
  const host = bareHost(url.hostname)
  if (!allowed) {
    const nameProblem = hostNameProblem(url)
    if (nameProblem) throw refused(url.host, nameProblem)
  }
  if (ipaddr.isValid(host)) {
    const problem = allowed ? undefined : addressProblem(host)
    if (problem) throw refused(url.host, problem)
    return { address: host, family: host.includes(':') ? 6 : 4 }
  }
  let answers: Array<{ address: string; family: number }>
  try {
    answers = await (options.resolve ?? defaultResolver)(host)
  } catch (error) {
    throw connectionError(url, error)
  }
  if (answers.length === 0) throw connectionError(url, Object.assign(new Error('no address'), { code: 'ENOTFOUND' }))
  // Every answer must be public: a name that also points inward is refused, not raced.
  for (const answer of allowed ? [] : answers) {
    const problem = addressProblem(answer.address)
    if (problem) throw refused(url.host, `its address ${problem}`)
  }
  const first = answers[0] as { address: string; family: number }
  return { address: first.address, family: first.family === 6 ? 6 : 4 }
}

/**
 * Kept-alive connections, one pool per checked address: a call to the same worker reuses the
 * connection of the call before it (no TCP or TLS handshake per call), and a connection is only ever
 * reused by a request whose own check pinned the same address, so a changed DNS answer is checked
 * and connected to afresh. At most `maxPools` addresses are kept; a pool dropped from the map keeps
 * no one waiting, since idle sockets are unreferenced and close after `idleMs` (sooner when the
 * server's Keep-Alive header says so).
 */
function connectionPools(): (url: URL, target: PinnedTarget) => HttpAgent {
  const maxPools = 64
  const options = { keepAlive: true, maxFreeSockets: 4, timeout: 4_000 }
  const pools = new Map<string, HttpAgent>()
  return (url, target) => {
    const name = `${url.protocol}//${target.address}|${url.port}|${url.hostname}`
    const pool = pools.get(name) ?? (url.protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options))
    // Most recently used last, so the first key is the one to drop.
    pools.delete(name)
    pools.set(name, pool)
    if (pools.size > maxPools) pools.delete(pools.keys().next().value as string)
    return pool
  }
}

function sendPinned(
  url: URL,
  target: PinnedTarget,
  method: string,
  headers: Record<string, string>,
  body: Uint8Array | undefined,
  signal: AbortSignal,
  agent: HttpAgent,
  retried = false,
): Promise<IncomingMessage> {
  // The connection goes to the address that was checked, whatever DNS says a moment later.
  const lookup: LookupFunction = (_host, options, callback) => {
    if ((options as { all?: boolean }).all)
      (callback as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [target])
    else callback(null, target.address, target.family)
  }
  const requestFunction = url.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise((resolve, reject) => {
    const outgoing = requestFunction(
      {
        protocol: url.protocol,
        hostname: bareHost(url.hostname),
        ...(url.port ? { port: url.port } : {}),
        path: `${url.pathname}${url.search}`,
        method,
        headers: { ...headers, ...(body ? { 'content-length': String(body.byteLength) } : {}) },
        lookup,
        signal,
        agent,
      },
      resolve,
    )
    outgoing.once('error', (error) => {
      // A kept-alive connection the server closed just as it was reused: the request never reached
      // it (no answer had begun), so it goes once more on a new connection, as Node's docs advise.
      if (
        outgoing.reusedSocket &&
        !retried &&
        !signal.aborted &&
        (error as NodeJS.ErrnoException).code === 'ECONNRESET'
      ) {
        resolve(sendPinned(url, target, method, headers, body, signal, agent, true))
      } else reject(error)
    })
    outgoing.end(body)
  })
}

function decoded(response: IncomingMessage): Readable {
  const encoding = String(response.headers['content-encoding'] ?? '').toLowerCase()
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? createGunzip()
      : encoding === 'deflate'
        ? createInflate()
        : encoding === 'br'
          ? createBrotliDecompress()
          : undefined
  if (!decoder) return response
  // pipeline, not pipe: a response destroyed at the deadline (or by an abort) must end the decoder
  // too, or a body that stalls mid-stream leaves its reader waiting past every timeout. The reader
  // sees the error; the callback has nothing to add.
  pipeline(response, decoder, () => {})
  return decoder
}

/** Reads at most maxBytes (after decompression, so a compression bomb stops at the cap). */
async function readCapped(
  response: IncomingMessage,
  maxBytes: number,
): Promise<{ body: Uint8Array; truncated: boolean }> {
  const chunks: Buffer[] = []
  let size = 0
  let truncated = false
  const stream = decoded(response)
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    if (size + chunk.byteLength > maxBytes) {
      chunks.push(chunk.subarray(0, maxBytes - size))
      size = maxBytes
      truncated = true
      break
    }
    chunks.push(chunk)
    size += chunk.byteLength
  }
  // A body read to its end leaves the connection to its pool for the next request; one cut short
  // is destroyed, with its connection.
  if (truncated || !response.complete) response.destroy()
  if (stream !== response) stream.destroy()
  const body = Buffer.concat(chunks)
  return { body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength), truncated }
}

function flatHeaders(response: IncomingMessage): Record<string, string> {
  const flat: Record<string, string> = {}
  for (const [name, value] of Object.entries(response.headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value
  }
  return flat
}

export function createNodeHttpClient(options: NodeHttpOptions): HttpClient {
  const poolOf = connectionPools()
  return {
    async check(url) {
      await pin(parseTargetUrl(url), options)
    },
    resolve: (url) => pin(parseTargetUrl(url), options),
    async request(request: HttpRequest): Promise<HttpResponse> {
      const headers = {
        'user-agent': options.userAgent ?? 'toolport/0.1',
        'accept-encoding': 'gzip, deflate, br',
        ...cleanRequestHeaders(request.headers),
      }
      const body = typeof request.body === 'string' ? new TextEncoder().encode(request.body) : request.body
      return requestWithRedirects<Uint8Array>(
        request,
        { headers, body },
        {
          connectionError,
          async send(hop) {
            const target = await pin(hop.url, options)
            const agent = poolOf(hop.url, target)
            const response = await sendPinned(hop.url, target, hop.method, hop.headers, hop.body, hop.signal, agent)
            return {
              status: response.statusCode ?? 0,
              location: response.headers.location,
              headers: () => flatHeaders(response),
              discard: () => {
                response.resume()
              },
              read: (maxBytes) => readCapped(response, maxBytes),
            }
          },
        },
      )
    },
  }
}
