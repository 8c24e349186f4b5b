import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { JWK } from 'jose'
import type { Authenticator } from '../../auth/authenticator'
import type { ApiKey } from '../../auth/keys'
import { scopesSupported } from '../../auth/oauth/scopes'
import type { StaticClient } from '../../auth/oauth/server-settings'
import type { Principal } from '../../auth/principal'
import { type Audit, serviceAuditTenant } from '../../core/audit'
import type { Logger } from '../../core/logger'
import type { RateLimit } from '../../core/rate-limit'
import type { RateLimiter } from '../../http/middleware/rate-limit'
import type { HttpClient } from '../../net/http'
import type { ObjectStore } from '../../storage/store'
import { consentPage, errorPage, type Page, signInPage } from './pages'
import { accountIdOf, createBuiltinProvider, tenantOfAccount } from './provider'
import { isUpstreamAccount, UpstreamRefused, type UpstreamSignIn, upstreamCallbackPath } from './upstream'

export interface BuiltinOAuthServer {
  issuer: string
  /** The signing keys' public halves: toolport verifies its own tokens with them, without a request. */
  publicKeys: JWK[]
  /** Serves /oauth/… (a Node request: its path still starts with /oauth). */
  handle(request: IncomingMessage, response: ServerResponse): Promise<void>
}

/** How much of a form body the sign-in and consent pages read. */
const maxFormBytes = 16 * 1024

async function readForm(request: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of request) {
    size += (chunk as Buffer).length
    if (size > maxFormBytes) throw new Error('form too large')
    chunks.push(chunk as Buffer)
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'))
}

function send(response: ServerResponse, status: number, page: Page): void {
  response.writeHead(status, page.headers)
  response.end(page.html)
}

/** What an account may hand a client: scopes, and the tools its tokens are capped to (undefined: every tool). */
interface Rights {
  scopes: string[]
  tools: readonly string[] | undefined
}

/** The scopes a key may hand a client: never more than the key itself may do. */
export function scopesAllowedFor(principal: Principal): string[] {
  // A key limited to some tools may still give effect scopes: its tokens carry its tool list as well
  // (toolport_tools), which caps them.
  const allowed = scopesSupported.filter((scope) => scope.startsWith('tools:'))
  if (principal.approver) allowed.push('approver')
  if (principal.admin) allowed.push('admin')
  return [...allowed, 'openid', 'offline_access']
}

/**
 * The built-in authorization server as a Node request handler: oidc-provider for the protocol
 * endpoints, toolport's own sign-in (with a toolport key) and consent pages for its interactions. Each
 * page's form carries a CSRF token bound to the interaction (an HMAC of its uid), besides the
 * interaction cookie oidc-provider checks; a wrong key shows the page again, never what was typed.
 */
export async function createBuiltinOAuthServer(options: {
  publicUrl: string
  storage: ObjectStore
  cookieSecret: string
  authenticator: Authenticator
  /** The configured keys: a signed-in account is found again by its key's digest. */
  keys: readonly ApiKey[]
  accessTokenSeconds: number
  refreshTokenSeconds: number
  /** Operator-registered clients (TOOLPORT_OAUTH_CLIENTS). */
  clients: readonly StaticClient[]
  clientMetadataDocuments: boolean
  /** The outbound client (address rules) that fetches client metadata documents. */
  http: HttpClient
  /** Sign-in through the operator's OpenID Connect provider, when configured. */
  upstream?: { signIn: UpstreamSignIn; scopes: readonly string[] }
  /** Token and registration requests per client address (TOOLPORT_OAUTH_RATE_LIMIT). */
  rateLimit: { limit: RateLimit; limiter: RateLimiter }
  log: Logger
  /** Where sign-ins and refused sign-ins are kept (the audit log). */
  audit?: Audit
}): Promise<BuiltinOAuthServer> {
  /**
   * What an account may give, found again on any instance: a key account by its key's digest (a key
   * removed since gives nothing), an upstream account by the operator's upstream scopes.
   */
  async function rightsOf(accountId: string | undefined): Promise<Rights | undefined> {
    if (!accountId) return undefined
    if (isUpstreamAccount(accountId)) {
      return options.upstream
        ? { scopes: [...options.upstream.scopes, 'openid', 'offline_access'], tools: undefined }
        : undefined
    }
    const key = options.keys.find((candidate) => accountIdOf(candidate.tenant, candidate.key) === accountId)
    if (!key) return undefined
    const principal = await options.authenticator.authenticate(`Bearer ${key.key}`)
    return { scopes: scopesAllowedFor(principal), tools: principal.tools ? [...principal.tools] : undefined }
  }
  const { provider, issuer, publicKeys } = await createBuiltinProvider({
    ...options,
    toolLimitOf: async (accountId) => (await rightsOf(accountId))?.tools,
  })
  const keyForm = options.keys.length > 0
  const upstreamLink = (uid: string) =>
    options.upstream ? { name: options.upstream.signIn.name, href: `/oauth/interaction/${uid}/upstream` } : undefined
  const protocol = provider.callback()
  const csrfOf = (uid: string) => createHmac('sha256', options.cookieSecret).update(`csrf:${uid}`).digest('base64url')
  const csrfMatches = (uid: string, presented: string | null) => {
    const expected = Buffer.from(csrfOf(uid))
    const given = Buffer.from(presented ?? '')
    return given.length === expected.length && timingSafeEqual(given, expected)
  }

  async function interaction(request: IncomingMessage, response: ServerResponse, path: string): Promise<void> {
    const match = /^\/interaction\/([A-Za-z0-9_-]{1,128})(\/login|\/confirm|\/upstream)?$/.exec(path)
    if (!match)
      return send(response, 404, signInPage({ action: '', csrf: '', client: '', nonce: '', error: 'Not found.' }))
    const uid = match[1] as string
    const details = await provider.interactionDetails(request, response)
    if (details.uid !== uid) throw new Error('interaction mismatch')
    const client = await provider.Client.find(String(details.params.client_id))
    const clientName = client?.clientName ?? String(details.params.client_id)
    const nonce = randomBytes(16).toString('base64url')
    const csrf = csrfOf(uid)
    const action = (step: string) => `/oauth/interaction/${uid}/${step}`
    /** Ends the interaction with its result: oidc-provider answers where the browser goes next. */
    const finish = async (
      result: Parameters<typeof provider.interactionResult>[2],
      options?: Parameters<typeof provider.interactionResult>[3],
    ) => redirect(response, await provider.interactionResult(request, response, result, options))
    const signIn = (error?: string) =>
      signInPage({
        action: action('login'),
        csrf,
        client: clientName,
        nonce,
        keyForm,
        ...(upstreamLink(uid) ? { upstream: upstreamLink(uid) } : {}),
        ...(error ? { error } : {}),
      })
    if (request.method === 'GET' && match[2] === '/upstream') {
      if (!options.upstream || details.prompt.name !== 'login') return send(response, 404, signIn('Not found.'))
      const { location, cookie } = await options.upstream.signIn.start(uid)
      response.writeHead(303, { location, 'set-cookie': cookie, 'cache-control': 'no-store' })
      response.end()
      return
    }
    if (request.method === 'GET') {
      if (details.prompt.name === 'login') return send(response, 200, signIn())
      return send(response, 200, await consentOf(details, clientName, nonce, csrf, action('confirm')))
    }
    if (request.method !== 'POST')
      return send(response, 405, signInPage({ action: '', csrf: '', client: '', nonce, error: 'Method not allowed.' }))
    const form = await readForm(request)
    if (!csrfMatches(uid, form.get('csrf'))) return send(response, 403, signIn('This form expired; sign in again.'))
    if (match[2] === '/login') {
      if (!keyForm) return send(response, 404, signIn('Not found.'))
      const key = form.get('key') ?? ''
      let principal: Principal
      try {
        principal = await options.authenticator.authenticate(`Bearer ${key}`)
        if (principal.oauth) throw new Error('a token is not a key')
      } catch {
        await options.audit?.record({
          tenant: serviceAuditTenant,
          principal: 'unknown',
          action: 'auth.sign_in_refused',
          target: String(details.params.client_id ?? '').slice(0, 200),
          outcome: 'refused',
          details: { reason: 'the key is not valid' },
        })
        return send(response, 401, signIn('That key is not valid.'))
      }
      await options.audit?.record({
        tenant: principal.tenant,
        principal: principal.id,
        action: 'auth.signed_in',
        target: String(details.params.client_id ?? '').slice(0, 200),
        outcome: 'success',
        details: { method: 'key' },
      })
      return finish({ login: { accountId: accountIdOf(principal.tenant, key) } }, { mergeWithLastSubmission: false })
    }
    // Consent: the scopes ticked, within what was asked and what the key may give.
    if (form.get('decision') !== 'allow') {
      return finish({ error: 'access_denied', error_description: 'the person denied the request' })
    }
    const accountId = details.session?.accountId
    const rights = await rightsOf(accountId)
    if (!accountId || !rights) return finish({ error: 'login_required' })
    const offered = new Set(offeredScopes(details, rights))
    const chosen = form.getAll('scope').filter((scope) => offered.has(scope))
    const grant =
      (details.grantId ? await provider.Grant.find(details.grantId) : undefined) ??
      new provider.Grant({ accountId, clientId: String(details.params.client_id) })
    // toolport's scopes are scopes of the provider and of the resource alike: granted (or rejected) as both.
    // What was asked and unticked, or that the key may not give, is rejected rather than left pending,
    // so the client gets a token with less instead of this page again.
    const rejected = [...askedScopes(details)].filter((scope) => !chosen.includes(scope))
    const providerScopes = new Set(['openid', 'offline_access', ...scopesSupported])
    const chosenOidc = chosen.filter((scope) => providerScopes.has(scope))
    const rejectedOidc = rejected.filter((scope) => providerScopes.has(scope))
    if (chosenOidc.length > 0) grant.addOIDCScope(chosenOidc.join(' '))
    if (rejectedOidc.length > 0) grant.rejectOIDCScope(rejectedOidc.join(' '))
    const resourceScopes = chosen.filter((scope) => scope !== 'openid' && scope !== 'offline_access')
    const rejectedResourceScopes = rejected.filter((scope) => scope !== 'openid' && scope !== 'offline_access')
    for (const resource of resourcesOf(details)) {
      if (resourceScopes.length > 0) grant.addResourceScope(resource, resourceScopes.join(' '))
      if (rejectedResourceScopes.length > 0) grant.rejectResourceScope(resource, rejectedResourceScopes.join(' '))
    }
    return finish({ consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true })
  }

  async function consentOf(
    details: Awaited<ReturnType<typeof provider.interactionDetails>>,
    client: string,
    nonce: string,
    csrf: string,
    action: string,
  ): Promise<Page> {
    const accountId = details.session?.accountId ?? ''
    const rights = await rightsOf(accountId)
    return consentPage({
      action,
      csrf,
      client,
      tenant: tenantOfAccount(accountId),
      scopes: rights ? offeredScopes(details, rights) : [],
      nonce,
    })
  }

  /** The token and registration endpoints per client address: 429 past TOOLPORT_OAUTH_RATE_LIMIT. */
  async function admitted(request: IncomingMessage, response: ServerResponse): Promise<boolean> {
    const { limit, limiter } = options.rateLimit
    const decision = await limiter.consume(`oauth:${request.socket.remoteAddress ?? 'unknown'}`)
    if (decision.allowed) return true
    response.writeHead(429, {
      'content-type': 'application/json',
      'cache-control': 'no-store',
      'retry-after': String(decision.retryAfterSeconds),
      'ratelimit-policy': `${limit.count};w=${limit.windowSeconds}`,
    })
    response.end(
      JSON.stringify({
        error: 'rate_limited',
        error_description: `at most ${limit.count} requests per ${limit.windowSeconds} s from one address; retry after ${decision.retryAfterSeconds} s`,
      }),
    )
    return false
  }

  /** The upstream provider's redirect back: the account it signed in ends the login step of its interaction. */
  async function upstreamReturn(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (!options.upstream || request.method !== 'GET') return send(response, 404, errorPage('not_found', ''))
    const headers = { 'set-cookie': options.upstream.signIn.clearCookie }
    let signedIn: { uid: string; accountId: string }
    try {
      signedIn = await options.upstream.signIn.finish(request)
    } catch (error) {
      if (!(error instanceof UpstreamRefused)) throw error
      await options.audit?.record({
        tenant: serviceAuditTenant,
        principal: 'unknown',
        action: 'auth.sign_in_refused',
        target: options.upstream.signIn.name.slice(0, 200),
        outcome: 'refused',
        details: { method: 'upstream', reason: error.message.slice(0, 300) },
      })
      const page = errorPage('access_denied', error.message)
      response.writeHead(403, { ...page.headers, ...headers })
      response.end(page.html)
      return
    }
    // The interaction cookie is scoped to the interaction's own path, which a fixed redirect URI cannot
    // carry: the signed binding cookie proved this browser started this interaction instead.
    const found = await provider.Interaction.find(signedIn.uid)
    if (!found) return send(response, 400, errorPage('expired', 'this sign-in expired; start again from your client'))
    found.result = { login: { accountId: signedIn.accountId } }
    // The account id is `{tenant}.sso-{digest}`: the tenant's chain keeps it, the digest names the person.
    const dot = signedIn.accountId.lastIndexOf('.sso-')
    await options.audit?.record({
      tenant: signedIn.accountId.slice(0, dot),
      principal: signedIn.accountId.slice(dot + 1),
      action: 'auth.signed_in',
      target: String(found.params.client_id ?? '').slice(0, 200),
      outcome: 'success',
      details: { method: 'upstream', provider: options.upstream.signIn.name.slice(0, 100) },
    })
    await found.save(found.exp - Math.floor(Date.now() / 1000))
    response.writeHead(303, { location: found.returnTo, 'cache-control': 'no-store', ...headers })
    response.end()
  }

  return {
    issuer,
    publicKeys,
    async handle(request, response) {
      const url = request.url ?? '/'
      const path = url.slice('/oauth'.length).split('?')[0] || '/'
      try {
        if (request.method === 'POST' && (path === '/token' || path === '/reg') && !(await admitted(request, response)))
          return
        if (path === upstreamCallbackPath.slice('/oauth'.length)) return await upstreamReturn(request, response)
        if (path.startsWith('/interaction/')) return await interaction(request, response, path)
        // oidc-provider routes relative to its mount path, as when mounted with Express.
        Object.assign(request, { originalUrl: url, url: url.slice('/oauth'.length) || '/' })
        await protocol(request, response)
      } catch (error) {
        options.log.warn('oauth request failed', { path, cause: String(error) })
        if (!response.headersSent) {
          send(
            response,
            400,
            signInPage({
              action: '',
              csrf: '',
              client: '',
              nonce: '',
              error: 'This sign-in expired or is not valid; start again from your client.',
            }),
          )
        }
      }
    },
  }
}

function redirect(response: ServerResponse, to: string): void {
  response.writeHead(303, { location: to, 'cache-control': 'no-store' })
  response.end()
}

type Details = { params: Record<string, unknown>; prompt: { details: Record<string, unknown> } }

/** What the client asked for: its scope and the resource scopes still missing. */
function askedScopes(details: Details): Set<string> {
  const asked = new Set(
    String(details.params.scope ?? '')
      .split(' ')
      .filter(Boolean),
  )
  const missing = details.prompt.details.missingResourceScopes as Record<string, string[]> | undefined
  for (const scopes of Object.values(missing ?? {})) for (const scope of scopes) asked.add(scope)
  return asked
}

/** What the client asked for, within what the account may give. */
function offeredScopes(details: Details, rights: Rights): string[] {
  const asked = askedScopes(details)
  return rights.scopes.filter((scope) => asked.has(scope))
}

function resourcesOf(details: {
  params: Record<string, unknown>
  prompt: { details: Record<string, unknown> }
}): string[] {
  const missing = details.prompt.details.missingResourceScopes as Record<string, string[]> | undefined
  const asked = details.params.resource
  const list = Array.isArray(asked) ? asked.map(String) : asked ? [String(asked)] : []
  return [...new Set([...Object.keys(missing ?? {}), ...list])]
}
