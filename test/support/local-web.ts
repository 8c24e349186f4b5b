import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface LocalWeb {
  url: string
  port: number
  /** Every request the server saw, in order. */
  hits: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string }>
  /** TCP connections accepted, with or without a request on them (a preconnect, a WebRTC candidate). */
  readonly connections: number
  stop(): Promise<void>
}

type Route = (request: IncomingMessage, response: ServerResponse, body: string) => void

/** A real HTTP server on 127.0.0.1 with routes a test defines; records every request. */
export async function startLocalWeb(routes: Record<string, Route>): Promise<LocalWeb> {
  const hits: LocalWeb['hits'] = []
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      hits.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body })
      const path = new URL(request.url ?? '/', 'http://local').pathname
      const route = routes[path]
      if (route) route(request, response, body)
      else {
        response.statusCode = 404
        response.end('not here')
      }
    })
  })
  let connections = 0
  server.on('connection', () => {
    connections++
  })
  // WebSocket handshakes arrive as upgrades, not requests: they count as hits too.
  server.on('upgrade', (request, socket) => {
    hits.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body: '' })
    socket.destroy()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    hits,
    get connections() {
      return connections
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
