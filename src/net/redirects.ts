import { ToolError } from '../core/errors'
import { parseTargetUrl } from './outbound-guard'

const redirectStatuses = new Set([301, 302, 303, 307, 308])
const credentialHeaders = ['authorization', 'cookie', 'proxy-authorization']

export interface NextHop {
  url: URL
  method: string
  /** The request body no longer applies (the redirect turned the request into a GET). */
  dropBody: boolean
}

/**
 * Where a response sends the request next, by the fetch standard's rules; undefined when it is not a
 * redirect. Shared by every HTTP client so each one re-checks the hop the same way. Removes from
 * `headers` (lower-case names) what must not follow: credentials and the caller's secret headers across
 * origins, Content-Type with a dropped body.
 */
export function nextHop(
  current: { url: URL; method: string },
  response: { status: number; location: string | null | undefined },
  headers: Record<string, string>,
  redirects: number,
  maxRedirects: number,
  secretHeaders: readonly string[] = [],
): NextHop | undefined {
  if (!redirectStatuses.has(response.status) || !response.location) return undefined
  if (redirects >= maxRedirects) {
    throw new ToolError('connection', `Stopped after ${maxRedirects} redirects at ${current.url.host}.`, {
      hint: 'The URL redirects too often; fetch the final address directly.',
    })
  }
  const url = redirectTarget(current.url, response.location)
  // Credentials and secrets were chosen for the first origin only; never hand them to another one.
  if (url.origin !== current.url.origin) {
    for (const name of [...credentialHeaders, ...secretHeaders]) delete headers[name.toLowerCase()]
  }
  const toGet =
    response.status === 303 || ((response.status === 301 || response.status === 302) && current.method === 'POST')
  if (toGet) delete headers['content-type']
  return { url, method: toGet ? 'GET' : current.method, dropBody: toGet }
}

/**
 * The address a Location header names, checked like the caller's own URL. A Location that is no URL,
 * or names another scheme or credentials, is the server's doing, not the caller's: a 502 naming the
 * redirect, never a 400 blaming the caller's (valid) url field.
 */
function redirectTarget(from: URL, location: string): URL {
  let raw: string
  try {
    raw = new URL(location, from).href
  } catch {
    throw badRedirect(from, `to ${JSON.stringify(location.slice(0, 200))}, which is not a URL`)
  }
  try {
    return parseTargetUrl(raw)
  } catch (error) {
    if (!(error instanceof ToolError)) throw error
    const target = new URL(raw)
    const reason =
      target.protocol !== 'http:' && target.protocol !== 'https:'
        ? `to a ${target.protocol} URL, which is never fetched`
        : 'to a URL with a user name or password, which is never fetched'
    throw badRedirect(from, reason)
  }
}

function badRedirect(from: URL, reason: string): ToolError {
  return new ToolError('connection', `${from.host} redirected ${reason}.`, {
    hint: 'The server sent a redirect toolport does not follow; fetch another address, or ask the site to fix it.',
    details: { redirect_from: from.href.slice(0, 500) },
  })
}
