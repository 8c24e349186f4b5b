import type { EventEmitter } from 'node:events'
import type { Duplex } from 'node:stream'
import { titleOf } from '../core/errors'

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
