import type { MiddlewareHandler } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { ToolError } from '../../core/errors'

/**
 * hono's bodyLimit with the same decisions, minus its cost on ordinary requests: hono first reads
 * c.req.raw.body, which on @hono/node-server turns the lightweight request into a full Fetch Request
 * streaming the socket, and then, when Content-Length is given without Transfer-Encoding, decides
 * on Content-Length alone (the HTTP parser never delivers more body than it declares). That
 * decision is taken here from the headers; only bodies of unknown length go through hono's counting
 * stream. Measured on a bare @hono/node-server route reading a 20-byte JSON body (16 connections,
 * three rounds, Node 20 here): 146–200 µs of CPU per request with hono's bodyLimit, 37–50 µs with
 * this. Tests: test/contract/http-contract.test.ts (413 by Content-Length and for a chunked body).
 */
export function limitBody(maxBytes: number, hint: string): MiddlewareHandler {
  const onError = (): never => {
    throw new ToolError('size_exceeded', `The request body is larger than ${maxBytes} bytes.`, { hint })
  }
  const counting = bodyLimit({ maxSize: maxBytes, onError })
  return async (context, next) => {
    const length = context.req.header('content-length')
    if (length === undefined || context.req.header('transfer-encoding') !== undefined) {
      return counting(context, next)
    }
    if (Number.parseInt(length, 10) > maxBytes) onError()
    await next()
  }
}
