import type { createLocalJWKSet, createRemoteJWKSet, JWK, JWTPayload } from 'jose'
import { serviceAuditTenant } from '../../core/audit'
import type { Effect } from '../../core/effects'
import { onFirstUse } from '../../core/first-use'
import { isValidIdentifier } from '../../core/paths'
import type { Principal } from '../principal'
import { invalidToken, issuerUnreachable } from './challenge'
import { createIntrospector } from './introspection'
import { grantOf, scopesOf } from './scopes'
import type { OAuthSettings } from './settings'

/** Verifies an access token and maps its claims to the principal a call runs as. */
export interface TokenVerifier {
  /** Resolves to the token's principal; throws unauthenticated (invalid_token) or unavailable (issuer unreachable). */
  verify(token: string): Promise<Principal>
  /** The principal of a JWT this verifier verified lately and that has not expired; nothing is checked. */
  remembered?(token: string): Principal | undefined
}

export interface TokenVerifierOptions {
  settings: OAuthSettings & { issuer: string }
  /** This resource's identifiers (TOOLPORT_PUBLIC_URL, and its /mcp): `aud` must name one (RFC 8707). */
  audiences: readonly string[]
  /** Effects whose calls wait for approval (TOOLPORT_APPROVAL), for tokens without the approver scope. */
  approvalPolicy: readonly Effect[]
  /** Fetches the issuer's metadata (tests may pass one; default: fetch). */
  fetch?: typeof fetch
  /** The least time between two fetches of the key set (default 30 s): an unknown key id refetches it. */
  keyRefetchCooldownMs?: number
  /** The issuer's public keys when toolport is the issuer (the built-in server): no discovery, no request. */
  localKeys?: JWK[]
}

interface IssuerMetadata {
  jwks_uri?: unknown
  introspection_endpoint?: unknown
}

const verifiedTtlMs = 60_000
const maxVerified = 2_000

/** A JWT has three base64url parts; anything else presented as a bearer is a key (or nothing valid). */
export function looksLikeJwt(value: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(value)
}

/** Where RFC 8414 and OpenID Connect put an issuer's metadata (path insertion for issuers with a path). */
function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer)
  const path = url.pathname.replace(/\/$/, '')
  return [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${url.origin}${path}/.well-known/openid-configuration`,
  ]
}

/**
 * JWT access tokens of one issuer, verified with jose against the keys its metadata publishes
 * (`jwks_uri`): the signature with an allow-listed asymmetric algorithm (never `none`, never HMAC, so
 * a public key can never be used as a shared secret), `iss`, `aud` (this resource), `exp` and `nbf`
 * with the configured skew. jose refetches the key set when a token names a key it has not seen (the
 * issuer rotated), at most every 30 s. The metadata is read on the first token and again after a failure.
 * With an introspection client configured, a bearer that is not a JWT is an opaque token the issuer's
 * `introspection_endpoint` checks (introspection.ts); both map their claims to a principal alike.
 */
export function createTokenVerifier(options: TokenVerifierOptions): TokenVerifier {
  const { settings } = options
  const load = options.fetch ?? fetch
  type KeySet = ReturnType<typeof createRemoteJWKSet> | ReturnType<typeof createLocalJWKSet>
  // jose loads with the first token: a service whose callers use keys never compiles it (a cold start).
  const jose = onFirstUse(() => import('jose'))
  const localKeys = options.localKeys
  let keys: Promise<KeySet> | undefined = localKeys
    ? jose().then(({ createLocalJWKSet }) => createLocalJWKSet({ keys: localKeys }))
    : undefined

  async function discover(): Promise<IssuerMetadata> {
    for (const url of metadataUrls(settings.issuer)) {
      const response = await load(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(10_000) })
      if (!response.ok) continue
      const found = (await response.json()) as IssuerMetadata & { issuer?: unknown }
      // RFC 8414 section 3.3: metadata for another issuer is not this issuer's.
      if (found.issuer !== settings.issuer) throw new Error(`${url} names issuer ${String(found.issuer)}`)
      return found
    }
    throw new Error(`no authorization server metadata at ${metadataUrls(settings.issuer).join(' or ')}`)
  }

  /** The issuer's metadata, read once; a failure is an unavailable issuer, and the next token reads it again. */
  const issuerMetadata = onFirstUse(() =>
    discover().catch((error: unknown) => {
      throw issuerUnreachable(error)
    }),
  )

  function keySet(): Promise<KeySet> {
    keys ??= Promise.all([issuerMetadata(), jose()])
      .then(([{ jwks_uri }, { createRemoteJWKSet }]) => {
        if (typeof jwks_uri !== 'string') throw issuerUnreachable(new Error(`${settings.issuer} publishes no jwks_uri`))
        return createRemoteJWKSet(new URL(jwks_uri), {
          cooldownDuration: options.keyRefetchCooldownMs ?? 30_000,
          timeoutDuration: 10_000,
        })
      })
      .catch((error: unknown) => {
        keys = undefined
        throw error
      })
    return keys
  }

  async function claimsOf(token: string): Promise<JWTPayload> {
    const jwks = await keySet()
    const { jwtVerify, errors } = await jose()
    try {
      const { payload } = await jwtVerify(token, jwks, {
        issuer: settings.issuer,
        audience: [...options.audiences],
        algorithms: [...settings.algorithms],
        clockTolerance: settings.clockSkewSeconds,
        requiredClaims: ['exp', 'sub'],
      })
      return payload
    } catch (error) {
      throw invalidToken(reasonOf(error, errors))
    }
  }

  const introspector =
    settings.introspection && !options.localKeys
      ? createIntrospector({
          issuer: settings.issuer,
          client: settings.introspection,
          audiences: options.audiences,
          clockSkewSeconds: settings.clockSkewSeconds,
          endpoint: async () => {
            const endpoint = (await issuerMetadata()).introspection_endpoint
            return typeof endpoint === 'string' ? endpoint : undefined
          },
          fetch: load,
        })
      : undefined

  async function principalOf(claims: Record<string, unknown>): Promise<Principal> {
    const named = claims[settings.tenantClaim]
    const tenant = typeof named === 'string' ? named : settings.tenant
    if (tenant === undefined || !isValidIdentifier(tenant) || tenant === serviceAuditTenant) {
      throw invalidToken(`it names no tenant (claim ${settings.tenantClaim})`)
    }
    // RFC 7662 makes `sub` optional: a token a client got for itself (client credentials) is its client's.
    const subject = typeof claims.sub === 'string' ? claims.sub : claims.client_id
    if (typeof subject !== 'string') throw invalidToken('it names no subject (sub)')
    const scopes = scopesOf(claims)
    const grant = grantOf(scopes)
    const workspace = settings.workspaceClaim ? claims[settings.workspaceClaim] : undefined
    return {
      id: `oauth-${await subjectDigest(settings.issuer, subject)}`,
      tenant,
      tools: grant.tools,
      effects: grant.effects,
      requireApproval: new Set(grant.approver ? [] : options.approvalPolicy),
      approver: grant.approver,
      admin: grant.admin,
      egress: undefined,
      oauth: { scopes },
      ...toolLimitOf(claims.toolport_tools),
      ...(typeof workspace === 'string' && isValidIdentifier(workspace) ? { defaultWorkspace: workspace } : {}),
    }
  }

  // Verified JWTs, by the token itself: a client sends the same token on every call until it expires,
  // and checking its signature again each time costs more than the read it carries. A JWT is
  // self-contained (nothing revokes one before `exp` but a key the issuer stops publishing), so an entry
  // lasts until the token expires, and at most a minute (jose itself trusts a fetched key set for ten),
  // after which the keys are consulted again.
  const verified = new Map<string, { principal: Principal; until: number; kid: string | undefined }>()
  // The key ids the key set held at the last verification: when they change (the issuer retired a key,
  // and a token of a new one made jose fetch the set again), tokens of keys gone are forgotten at once.
  let kids = ''

  function remembered(token: string): Principal | undefined {
    const known = verified.get(token)
    if (!known) return undefined
    if (known.until > Date.now()) return known.principal
    verified.delete(token)
    return undefined
  }

  async function verifiedJwt(token: string): Promise<Principal> {
    const known = remembered(token)
    if (known) return known
    const now = Date.now()
    const claims = await claimsOf(token)
    const principal = await principalOf(claims)
    const published = ((await keySet()).jwks?.()?.keys ?? []).map((key) => key.kid ?? '')
    const current = published.join(' ')
    if (current !== kids) {
      kids = current
      for (const [known, entry] of verified) {
        if (entry.kid === undefined || !published.includes(entry.kid)) verified.delete(known)
      }
    }
    const expires = typeof claims.exp === 'number' ? claims.exp * 1000 : now
    const until = Math.min(expires, now + verifiedTtlMs)
    if (until > now) {
      // Oldest first out: a bound on memory however many clients there are.
      if (verified.size >= maxVerified) verified.delete(verified.keys().next().value as string)
      verified.set(token, { principal, until, kid: (await jose()).decodeProtectedHeader(token).kid })
    }
    return principal
  }

  return {
    remembered,
    async verify(token) {
      if (looksLikeJwt(token)) return verifiedJwt(token)
      if (introspector) return principalOf(await introspector.claims(token))
      throw invalidToken('it is neither a key nor a JWT')
    },
  }
}

/** `toolport_tools`: the tools of the key a built-in token was issued through; it only ever narrows. */
function toolLimitOf(value: unknown): { toolLimit?: ReadonlySet<string> } {
  if (!Array.isArray(value)) return {}
  return { toolLimit: new Set(value.filter((entry): entry is string => typeof entry === 'string')) }
}

/** Why jose refused a token, in words safe to show (never the token). */
function reasonOf(error: unknown, errors: typeof import('jose')['errors']): string {
  if (error instanceof errors.JWTExpired) return 'it has expired'
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'aud') return 'it was issued for another resource (aud)'
    if (error.claim === 'iss') return 'it was issued by another issuer (iss)'
    if (error.claim === 'nbf') return 'it is not valid yet (nbf)'
    return `its ${error.claim} claim is wrong`
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return 'its signature algorithm is not accepted'
  if (error instanceof errors.JWKSNoMatchingKey) return 'it is signed with a key the issuer does not publish'
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'its signature does not verify'
  return 'it could not be verified'
}

/** A stable, non-personal id for the token's subject (rate limits, metrics, stored calls). */
async function subjectDigest(issuer: string, subject: string): Promise<string> {
  const bytes = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(`${issuer} ${subject}`)))
  return [...bytes.slice(0, 8)].map((byte) => byte.toString(16).padStart(2, '0')).join('')
}
