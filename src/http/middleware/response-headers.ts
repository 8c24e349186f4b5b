import type { Context } from 'hono'

/**
 * Sets headers on the response a handler already produced. Hono's context.header() at that point
 * rebuilds the Response, which on @hono/node-server turns its cheap response into a full Fetch
 * Response with a body stream: a measurable share of a small call. The response's own headers are
 * the ones written out, and they are mutable unless the response came from fetch(); only then is
 * the rebuild needed.
 */
export function setResponseHeaders(context: Context, headers: Record<string, string>): void {
  const target = context.res.headers
  try {
    for (const [name, value] of Object.entries(headers)) target.set(name, value)
  } catch {
    for (const [name, value] of Object.entries(headers)) context.header(name, value)
  }
}
