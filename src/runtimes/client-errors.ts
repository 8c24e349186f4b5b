import type { EventEmitter } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { Duplex } from 'node:stream'
import { getRequestListener } from '@hono/node-server'
import { titleOf } from '../core/errors'

/**
 * The Node HTTP server of the service. @hono/node-server answers a request it cannot turn into a
 * Fetch Request (no Host, a Host that is no host name, `OPTIONS *`) with an empty 400, and Node
 * itself refuses a missing Host before any handler runs: both get the problem+json document every
 * other error has, here. Requests it can build go to `fetch` as with serve().
 */
export function createNodeServer(fetch: (request: Request) => Response | Promise<Response>): Server {
  const listener = getRequestListener(fetch, {
    errorHandler: () =>
      new Response(
        JSON.stringify({
          type: 'urn:toolport:problem:validation',
          title: titleOf('validation'),
          status: 400,
          detail: 'The request has no valid Host header or target, so it names no resource of this service.',
          code: 'validation',
          hint: "Send a Host header with the service's host name and an origin-form target, such as /v1/tools.",
        }),
        { status: 400, headers: { 'content-type': 'application/problem+json', connection: 'close' } },
      ),
  })
  const server = createServer({ requireHostHeader: false }, listener)
  answerClientErrors(server)
  return server
}

/**
 * Node answers requests it cannot parse (headers over its limit, a garbled request line) itself, before
 * Hono sees them, with a bare status line. Give them the problem+json document every other error has.
 */
export function answerClientErrors(server: EventEmitter): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A connection the client already reset cannot be answered.
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy()
      return
    }
    const headersTooLarge = error.code === 'HPE_HEADER_OVERFLOW'
    const status = headersTooLarge ? 431 : 400
    const code = headersTooLarge ? 'size_exceeded' : 'validation'
    const body = JSON.stringify({
      type: `urn:toolport:problem:${code}`,
      title: titleOf(code),
      status,
      detail: headersTooLarge
        ? 'The request headers are larger than this service accepts.'
        : 'The request is not valid HTTP.',
      code,
      hint: headersTooLarge
        ? 'Send smaller headers (cookies and tokens are the usual culprits); bodies carry the data.'
        : 'Send a well-formed HTTP/1.1 request.',
    })
    const reason = headersTooLarge ? 'Request Header Fields Too Large' : 'Bad Request'
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    )
  })
}
