import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { connect } from 'node:net'
import type { Duplex } from 'node:stream'

/**
 * The address check of the outbound client, answering the address it allowed (http_fetch's rules:
 * public addresses, and the exact host:ports the operator opened). Throws for a refused target.
 */
export type AddressResolver = (url: string) => Promise<{ address: string; family: 4 | 6 }>

export interface BrowserProxyOptions {
  /** Unset: every connection is refused (a browser that must reach nothing). */
  resolve: AddressResolver | undefined
  /** Told of every refused target ("host:port" or a URL), for the log and the browser's reports. */
  onRefused?: (target: string, error: unknown) => void
}

export interface BrowserProxy {
  port: number
  /** The Chromium flags that send every connection of the browser through this proxy. */
  chromiumArgs: string[]
  close(): Promise<void>
}

// Hop-by-hop headers (RFC 9110 7.6.1) and the proxy's own: never forwarded.
const hopByHop = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'upgrade',
])

function forwardable(raw: string[]): string[] {
  const kept: string[] = []
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const name = raw[index] as string
    if (!hopByHop.has(name.toLowerCase())) kept.push(name, raw[index + 1] as string)
  }
  return kept
}

/**
 * A forward proxy on 127.0.0.1 that is the only way out of the shared Chromium: every connection the
 * browser makes — documents, subresources, XHR/fetch, workers and service workers, popups and frames,
 * WebSockets, WebTransport (no QUIC through a proxy) and WebRTC over TCP (UDP is off) — arrives here as
 * a CONNECT tunnel or an absolute-form request, passes the same address check as http_fetch, and
 * connects to the very address that was checked, so DNS rebinding cannot move it. Request interception
 * in the pages sees only what CDP shows it; this sees every socket.
 */
export async function startBrowserProxy(options: BrowserProxyOptions): Promise<BrowserProxy> {
  const sockets = new Set<Duplex>()
  const track = (socket: Duplex) => {
    sockets.add(socket)
    socket.on('error', () => {})
    socket.once('close', () => sockets.delete(socket))
  }

  async function resolveOrRefuse(target: string, url: string) {
    try {
      if (!options.resolve) throw new Error('this browser may not reach the network')
      return await options.resolve(url)
    } catch (error) {
      options.onRefused?.(target, error)
      return undefined
    }
  }

  function tunnel(request: IncomingMessage, client: Duplex, head: Buffer): void {
    track(client)
    const target = request.url ?? ''
    let url: URL
    try {
      url = new URL(`https://${target}/`)
      if (url.host.toLowerCase() !== target.toLowerCase().replace(/:443$/, '')) throw new Error('not host:port')
    } catch {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n')
      return
    }
    void resolveOrRefuse(target, url.href).then((pinned) => {
      if (!pinned) {
        client.end('HTTP/1.1 403 Forbidden\r\n\r\n')
        return
      }
      const upstream = connect({ host: pinned.address, family: pinned.family, port: Number(url.port || 443) })
      track(upstream)
      let connected = false
      upstream.once('connect', () => {
        connected = true
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
        if (head.length > 0) upstream.write(head)
        upstream.pipe(client)
        client.pipe(upstream)
      })
      upstream.once('error', () => {
        if (!connected) client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n')
      })
      upstream.once('close', () => client.destroy())
      client.once('close', () => upstream.destroy())
    })
  }

  function forward(request: IncomingMessage, response: ServerResponse): void {
    track(request.socket)
    let url: URL
    try {
      url = new URL(request.url ?? '')
      if (url.protocol !== 'http:') throw new Error('not http')
    } catch {
      response.writeHead(400).end()
      return
    }
    void resolveOrRefuse(url.host, url.href).then((pinned) => {
      if (!pinned) {
        response.writeHead(403).end()
        return
      }
      const upstream = httpRequest({
        host: pinned.address,
        family: pinned.family,
        port: Number(url.port || 80),
        method: request.method,
        path: `${url.pathname}${url.search}`,
        headers: forwardable(request.rawHeaders),
        setHost: false,
        agent: false,
      })
      upstream.once('response', (answer) => {
        response.writeHead(answer.statusCode ?? 502, forwardable(answer.rawHeaders))
        answer.pipe(response)
      })
      upstream.once('error', () => {
        if (!response.headersSent) response.writeHead(502).end()
        else response.destroy()
      })
      response.once('close', () => upstream.destroy())
      request.pipe(upstream)
    })
  }

  const server = createServer(forward)
  server.on('connect', tunnel)
  // WebSockets come as CONNECT tunnels; an absolute-form upgrade is not something Chromium sends.
  server.on('upgrade', (_request, socket: Socket) => socket.destroy())
  server.on('clientError', (_error, socket) => socket.destroy())
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    port,
    chromiumArgs: [
      `--proxy-server=http://127.0.0.1:${port}`,
      // Chromium sends loopback and localhost past any proxy unless told not to.
      '--proxy-bypass-list=<-loopback>',
      // WebRTC may then use TCP through the proxy only: no UDP to any address.
      '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
    ],
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
