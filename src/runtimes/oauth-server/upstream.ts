import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import * as oauth from 'oauth4webapi'
import type { UpstreamSettings } from '../../auth/oauth/server-settings'
import { isValidIdentifier } from '../../core/paths'

/** Where the upstream provider sends the person back: the redirect URI the operator registers there. */
export const upstreamCallbackPath = '/oauth/upstream/callback'
const cookieName = 'toolport_upstream'
/** As long as an interaction lives: a sign-in left longer than that starts again anyway. */
const cookieSeconds = 600

/** Why an upstream sign-in was refused, in words for the person (never a token or a code). */
export class UpstreamRefused extends Error {}

export interface UpstreamSignIn {
  /** "Sign in with <name>". */
  name: string
  /** Sends the person to the provider for the interaction `uid`: where to, and the cookie binding the return to this browser. */
  start(uid: string): Promise<{ location: string; cookie: string }>
  /** The provider's redirect back: the interaction it belongs to and the account signed in. Throws UpstreamRefused. */
  finish(request: IncomingMessage): Promise<{ uid: string; accountId: string }>
  /** Clears the binding cookie once used. */
  clearCookie: string
}

/** The account id of a person signed in upstream: the tenant and a digest of issuer and subject. */
export function upstreamAccountId(tenant: string, issuer: string, subject: string): string {
  return `${tenant}.sso-${createHash('sha256').update(`${issuer} ${subject}`).digest('base64url').slice(0, 22)}`
}

export function isUpstreamAccount(accountId: string): boolean {
  return /\.sso-[A-Za-z0-9_-]{22}$/.test(accountId)
}

interface Binding {
  uid: string
  state: string
  nonce: string
  verifier: string
  /** Epoch seconds after which the binding is void. */
  exp: number
}

/**
 * Sign-in through the operator's OpenID Connect provider (TOOLPORT_OAUTH_UPSTREAM_ISSUER), with
 * oauth4webapi (the same author's certified client pieces as oidc-provider and jose): discovery, the
 * authorization code flow with PKCE, state and nonce, the ID token validated (issuer, audience,
 * signature, nonce). The state, nonce and verifier travel in an HMAC-signed, HttpOnly cookie, so the
 * provider's redirect may reach any instance and only the browser that started it can finish it.
 */
export function createUpstreamSignIn(settings: UpstreamSettings, publicUrl: string, secret: string): UpstreamSignIn {
  const issuer = new URL(settings.issuer)
  // Plain http only for a provider on this machine's loopback (a test, a local Keycloak).
  const insecure = issuer.protocol === 'http:' ? { [oauth.allowInsecureRequests]: true } : {}
  const client: oauth.Client = { client_id: settings.clientId as string }
  const clientAuth = oauth.ClientSecretBasic(settings.clientSecret as string)
  const redirectUri = `${publicUrl}${upstreamCallbackPath}`
  const secure = publicUrl.startsWith('https:') ? '; Secure' : ''
  let server: Promise<oauth.AuthorizationServer> | undefined

  function authorizationServer(): Promise<oauth.AuthorizationServer> {
    server ??= oauth
      .discoveryRequest(issuer, { algorithm: 'oidc', ...insecure })
      .then((response) => oauth.processDiscoveryResponse(issuer, response))
      .catch((error: unknown) => {
        server = undefined
        throw new UpstreamRefused(`${settings.name} could not be reached (${String(error)}); try again.`)
      })
    return server
  }

  const sign = (payload: string) => createHmac('sha256', secret).update(`upstream:${payload}`).digest('base64url')

  function readBinding(request: IncomingMessage): Binding {
    const value = (request.headers.cookie ?? '')
      .split(';')
      .map((part) => part.trim())
      .find((part) => part.startsWith(`${cookieName}=`))
      ?.slice(cookieName.length + 1)
    const [payload = '', signature = ''] = (value ?? '').split('.')
    const expected = Buffer.from(sign(payload))
    const given = Buffer.from(signature)
    if (!value || given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new UpstreamRefused('This sign-in was not started in this browser; start again from your client.')
    }
    const binding = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Binding
    if (binding.exp < Date.now() / 1000)
      throw new UpstreamRefused('This sign-in expired; start again from your client.')
    return binding
  }

  function allowed(claims: oauth.IDToken): boolean {
    if (settings.allow.length === 0) return true
    const email = typeof claims.email === 'string' ? claims.email.toLowerCase() : undefined
    // A provider that says the address is not verified is not trusted with it.
    if (!email || claims.email_verified === false) return false
    return settings.allow.some((entry) =>
      entry.startsWith('@') ? email.endsWith(entry.toLowerCase()) : email === entry.toLowerCase(),
    )
  }

  function tenantOf(claims: oauth.IDToken): string {
    const named = settings.tenantClaim ? claims[settings.tenantClaim] : undefined
    const tenant = typeof named === 'string' ? named : settings.tenant
    if (!tenant || !isValidIdentifier(tenant) || tenant.includes('.')) {
      throw new UpstreamRefused(`${settings.name} did not say which tenant you belong to; ask the operator.`)
    }
    return tenant
  }

  return {
    name: settings.name,
    clearCookie: `${cookieName}=; Path=/oauth/upstream; HttpOnly; SameSite=Lax; Max-Age=0${secure}`,
    async start(uid) {
      const as = await authorizationServer()
      if (!as.authorization_endpoint) throw new UpstreamRefused(`${settings.name} has no authorization endpoint.`)
      const binding: Binding = {
        uid,
        state: oauth.generateRandomState(),
        nonce: oauth.generateRandomNonce(),
        verifier: oauth.generateRandomCodeVerifier(),
        exp: Math.floor(Date.now() / 1000) + cookieSeconds,
      }
      const location = new URL(as.authorization_endpoint)
      location.search = new URLSearchParams({
        client_id: client.client_id,
        redirect_uri: redirectUri,
        response_type: 'code',
        scope: 'openid email profile',
        state: binding.state,
        nonce: binding.nonce,
        code_challenge: await oauth.calculatePKCECodeChallenge(binding.verifier),
        code_challenge_method: 'S256',
      }).toString()
      const payload = Buffer.from(JSON.stringify(binding)).toString('base64url')
      return {
        location: location.href,
        // Lax: the provider's redirect back is a top-level GET from another site.
        cookie: `${cookieName}=${payload}.${sign(payload)}; Path=/oauth/upstream; HttpOnly; SameSite=Lax; Max-Age=${cookieSeconds}${secure}`,
      }
    },
    async finish(request) {
      const binding = readBinding(request)
      const as = await authorizationServer()
      const url = new URL(request.url ?? '/', publicUrl)
      let claims: oauth.IDToken
      try {
        const params = oauth.validateAuthResponse(as, client, url, binding.state)
        const response = await oauth.authorizationCodeGrantRequest(
          as,
          client,
          clientAuth,
          params,
          redirectUri,
          binding.verifier,
          insecure,
        )
        const result = await oauth.processAuthorizationCodeResponse(as, client, response, {
          expectedNonce: binding.nonce,
          requireIdToken: true,
        })
        claims = oauth.getValidatedIdTokenClaims(result) as oauth.IDToken
      } catch (error) {
        const reason = error instanceof oauth.AuthorizationResponseError ? error.error : 'the answer did not verify'
        throw new UpstreamRefused(`${settings.name} did not sign you in (${reason}); start again from your client.`)
      }
      if (!allowed(claims)) {
        throw new UpstreamRefused(`Your ${settings.name} account may not use this toolport; ask the operator.`)
      }
      return { uid: binding.uid, accountId: upstreamAccountId(tenantOf(claims), settings.issuer, claims.sub) }
    },
  }
}
