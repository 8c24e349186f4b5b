import type { MiddlewareHandler } from 'hono'
import { isLoopbackHost } from '../../core/loopback'
import type { AppEnv } from '../env'

/**
 * The origin of the links a response hands out (file links, job status_url, approval approve_url). It
 * may not follow the request's Host header, which any client sets: a link built on a forged Host would
 * hand a download token, or an approver's key, to another origin. In order: TOOLPORT_PUBLIC_URL; an
 * origin the runtime vouches for (Lambda: the domain API Gateway or the function URL service reports,
 * not the Host header); the request's own origin when its host is one of TOOLPORT_ALLOWED_HOSTS or,
 * with none listed, the server's own listen address or loopback; otherwise the listen address.
 */
export interface LinkOriginPolicy {
  /** TOOLPORT_PUBLIC_URL, when set. */
  publicUrl: string | undefined
  /** TOOLPORT_ALLOWED_HOSTS: `host` (any port) or `host:port`, lower case. */
  allowedHosts: readonly string[]
  /** HOST: the listen address. */
  listenHost: string
  /** `http://{HOST}:{PORT}`: where links point when the request's host is not trusted. */
  fallbackUrl: string
  /** An origin the runtime knows the request really came in on, if any. */
  vouchedOrigin?: (request: Request, env: unknown) => string | undefined
}

const wildcardHosts = new Set(['0.0.0.0', '::', '[::]'])

export function hostIsTrusted(url: URL, policy: Pick<LinkOriginPolicy, 'allowedHosts' | 'listenHost'>): boolean {
  const hostname = url.hostname.toLowerCase()
  if (policy.allowedHosts.length > 0) {
    return policy.allowedHosts.some((allowed) => allowed === hostname || allowed === url.host.toLowerCase())
  }
  const listen = policy.listenHost.toLowerCase().replace(/^\[(.*)\]$/, '$1')
  const bare = hostname.replace(/^\[(.*)\]$/, '$1')
  return isLoopbackHost(bare) || (!wildcardHosts.has(listen) && bare === listen)
}

export function linkOriginOf(request: Request, env: unknown, policy: LinkOriginPolicy): string {
  if (policy.publicUrl) return policy.publicUrl.replace(/\/+$/, '')
  const vouched = policy.vouchedOrigin?.(request, env)
  if (vouched) return vouched
  const url = new URL(request.url)
  return hostIsTrusted(url, policy) ? url.origin : policy.fallbackUrl.replace(/\/+$/, '')
}

/**
 * Sets `linkOrigin` for the routes that build links. Without a public URL or a vouched origin the
 * answer depends on the request URL's host and port alone. For a URL that starts `scheme://`, then
 * only letters, digits, '.', '-', ':', '[' and ']' up to a '/', the URL parser reads exactly that
 * run as the host and port (no userinfo, escape, '\\', '?' or '#' can be in it, and no further
 * slash before it), so every URL with the same start has the same answer. Nearly every request
 * to an instance shares it: the last answer is kept with that start, and a URL is parsed only when
 * its start differs. Any other URL is answered on its own, as before.
 */
export function linkOrigin(policy: LinkOriginPolicy): MiddlewareHandler<AppEnv> {
  const keeps = !policy.publicUrl && !policy.vouchedOrigin
  let last: { start: string; origin: string } | undefined
  return async (context, next) => {
    const request = context.req.raw
    const url = request.url
    if (keeps && last !== undefined && url.startsWith(last.start)) context.set('linkOrigin', last.origin)
    else {
      const origin = linkOriginOf(request, context.env, policy)
      const start = keeps ? hostStartOf(url) : undefined
      if (start !== undefined) last = { start, origin }
      context.set('linkOrigin', origin)
    }
    await next()
  }
}

const plainHostStart = /^[a-z][a-z0-9+.-]*:\/\/[a-z0-9.:[\]-]+\//i

/** `url` up to and including the '/' after a plain `scheme://host:port`; undefined for any other URL. */
function hostStartOf(url: string): string | undefined {
  return plainHostStart.exec(url)?.[0]
}
