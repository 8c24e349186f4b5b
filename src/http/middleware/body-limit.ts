import type { Context, MiddlewareHandler } from 'hono'
import { bodyLimit } from 'hono/body-limit'

/**
 * hono's bodyLimit with the same decisions, minus its cost on ordinary requests: hono first reads
 * c.req.raw.body, which on @hono/node-server turns the lightweight request into a full Fetch Request
 * streaming the socket, and then, when Content-Length is given without Transfer-Encoding, decides
 * on Content-Length alone (the HTTP parser never delivers more body than it declares). That
 * decision is taken here from the headers; only bodies of unknown length go through hono's counting
 * stream.
 */
export function limitBody(maxSize: number, onError: (context: Context) => never): MiddlewareHandler {
  const counting = bodyLimit({ maxSize, onError })
  return async (context, next) => {
    const length = context.req.header('content-length')
    if (length === undefined || context.req.header('transfer-encoding') !== undefined) {
      return counting(context, next)
    }
    if (Number.parseInt(length, 10) > maxSize) onError(context)
    await next()
  }
}
