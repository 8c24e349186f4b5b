import { ToolError } from '../../core/errors'
import { invalidToken, issuerUnreachable } from './challenge'

/** What an active introspection answer says about a token (RFC 7662 section 2.2), checked. */
export type IntrospectedClaims = Record<string, unknown> & { active: true }

/** Asks the issuer about opaque access tokens; resolves to their claims or throws like the JWT path. */
export interface Introspector {
  claims(token: string): Promise<IntrospectedClaims>
}

export interface IntrospectorOptions {
  issuer: string
  client: { clientId: string; clientSecret: string }
  /** This resource's identifiers: `aud` must name one (RFC 8707), as for JWTs. */
  audiences: readonly string[]
  clockSkewSeconds: number
  /** The issuer's `introspection_endpoint`, from its metadata (throws unavailable when it cannot be read). */
  endpoint(): Promise<string | undefined>
  fetch?: typeof fetch
  /** Most answers kept (default 10,000); the least recently used goes first. */
  cacheSize?: number
  /** Longest an answer is reused (default 60 s; never beyond the token's `exp`). */
  cacheSeconds?: number
  now?: () => number
}

/**
 * Opaque access tokens, checked by asking the issuer (RFC 7662): a POST of `token` with
 * `token_type_hint=access_token` to its `introspection_endpoint`, authenticated as toolport's client
 * (`client_secret_basic`). An active answer must name this issuer (`iss`, when present) and this
 * resource (`aud`), and not be expired (`exp`, `nbf`, with the skew). Active answers are reused for at
 * most `cacheSeconds` and never past `exp`, keyed by the token's SHA-256 digest (the token itself is
 * never kept), in a bounded LRU: a revocation at the issuer takes effect within a minute.
 */
export function createIntrospector(options: IntrospectorOptions): Introspector {
  const load = options.fetch ?? fetch
  const now = options.now ?? Date.now
  const cache = createLru<IntrospectedClaims>(options.cacheSize ?? 10_000)
  const cacheMs = (options.cacheSeconds ?? 60) * 1000
  const authorization = `Basic ${btoa(`${formEncode(options.client.clientId)}:${formEncode(options.client.clientSecret)}`)}`

  async function ask(token: string): Promise<Record<string, unknown>> {
    const endpoint = await options.endpoint()
    if (!endpoint) {
      throw new ToolError(
        'unavailable',
        'The token issuer offers no introspection, so this opaque access token cannot be checked.',
        {
          hint: 'The operator: the issuer metadata has no introspection_endpoint; enable introspection there, or unset TOOLPORT_OAUTH_INTROSPECTION_CLIENT_ID.',
        },
      )
    }
    let response: Response
    try {
      response = await load(endpoint, {
        method: 'POST',
        headers: { authorization, accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }),
        signal: AbortSignal.timeout(10_000),
      })
    } catch (error) {
      throw issuerUnreachable(new Error(`introspection at ${endpoint} failed: ${String(error)}`))
    }
    if (response.status === 400 || response.status === 401 || response.status === 403) {
      // RFC 6749 section 5.2: invalid_client (or a request the issuer refuses) is toolport's setup, not the caller's token.
      // Only the error code goes to the log: an issuer's description might quote what it was sent.
      const { error } = ((await response.json().catch(() => ({}))) ?? {}) as { error?: unknown }
      throw new ToolError(
        'unavailable',
        'The token issuer refused toolport’s introspection request, so the access token cannot be checked.',
        {
          hint: 'The operator: check TOOLPORT_OAUTH_INTROSPECTION_CLIENT_ID and TOOLPORT_OAUTH_INTROSPECTION_CLIENT_SECRET against the client registered at the issuer.',
          cause: new Error(
            `introspection at ${endpoint} answered ${response.status} ${typeof error === 'string' ? error.slice(0, 64) : ''}`,
          ),
        },
      )
    }
    if (!response.ok) throw issuerUnreachable(new Error(`introspection at ${endpoint} answered ${response.status}`))
    const body: unknown = await response.json().catch(() => undefined)
    if (typeof body !== 'object' || body === null || typeof (body as { active?: unknown }).active !== 'boolean') {
      throw issuerUnreachable(new Error(`introspection at ${endpoint} answered without a boolean "active"`))
    }
    return body as Record<string, unknown>
  }

  function check(answer: Record<string, unknown>): IntrospectedClaims {
    if (answer.active !== true) throw invalidToken('the issuer says it is not active (revoked, expired or unknown)')
    if (answer.iss !== undefined && answer.iss !== options.issuer) {
      throw invalidToken('it was issued by another issuer (iss)')
    }
    const audiences = typeof answer.aud === 'string' ? [answer.aud] : Array.isArray(answer.aud) ? answer.aud : []
    if (!audiences.some((audience) => options.audiences.includes(audience))) {
      throw invalidToken('it was issued for another resource (aud)')
    }
    const seconds = now() / 1000
    if (typeof answer.exp === 'number' && answer.exp + options.clockSkewSeconds <= seconds) {
      throw invalidToken('it has expired')
    }
    if (typeof answer.nbf === 'number' && answer.nbf - options.clockSkewSeconds > seconds) {
      throw invalidToken('it is not valid yet (nbf)')
    }
    return answer as IntrospectedClaims
  }

  return {
    async claims(token) {
      const key = await tokenDigest(token)
      const cached = cache.get(key)
      if (cached && cached.until > now()) return cached.value
      const claims = check(await ask(token))
      const until = Math.min(
        now() + cacheMs,
        typeof claims.exp === 'number' ? claims.exp * 1000 : Number.POSITIVE_INFINITY,
      )
      if (until > now()) cache.set(key, { value: claims, until })
      return claims
    },
  }
}

/** RFC 6749 section 2.3.1: client id and secret are form-encoded before Basic's base64. */
function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, '+')
}

/** The cache key of a token: its SHA-256 digest, so the cache never holds a usable token. */
async function tokenDigest(token: string): Promise<string> {
  const bytes = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(token)))
  return [...bytes].map((byte) => byte.toString(16).padStart(2, '0')).join('')
}

export interface Lru<T> {
  get(key: string): { value: T; until: number } | undefined
  set(key: string, entry: { value: T; until: number }): void
  readonly size: number
}

/** A Map in use order: a hit moves to the end, and past `limit` the first (least recently used) goes. */
export function createLru<T>(limit: number): Lru<T> {
  const entries = new Map<string, { value: T; until: number }>()
  return {
    get(key) {
      const entry = entries.get(key)
      if (entry) {
        entries.delete(key)
        entries.set(key, entry)
      }
      return entry
    },
    set(key, entry) {
      entries.delete(key)
      entries.set(key, entry)
      while (entries.size > limit) {
        const oldest = entries.keys().next().value
        if (oldest === undefined) break
        entries.delete(oldest)
      }
    },
    get size() {
      return entries.size
    },
  }
}
