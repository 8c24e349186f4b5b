import { createHash } from 'node:crypto'
import { exportJWK, generateKeyPair, type JWK } from 'jose'
import Provider, { errors } from 'oidc-provider'
import { scopesSupported } from '../../auth/oauth/scopes'
import type { StaticClient } from '../../auth/oauth/server-settings'
import type { HttpClient } from '../../net/http'
import { oauthKeys } from '../../storage/layout'
import type { ObjectStore } from '../../storage/store'
import { errorPage } from './pages'
import { createStorageAdapterFactory } from './storage-adapter'

export interface BuiltinServerOptions {
  /** TOOLPORT_PUBLIC_URL: the resource; the issuer is its /oauth. */
  publicUrl: string
  storage: ObjectStore
  /** Keys the sign-in cookies (TOOLPORT_SIGNING_SECRET: the same on every instance). */
  cookieSecret: string
  accessTokenSeconds: number
  refreshTokenSeconds: number
  /** The tools of the key an account signed in with (undefined: every tool): its tokens carry them. */
  toolLimitOf: (accountId: string) => Promise<readonly string[] | undefined>
  /** Operator-registered confidential clients (TOOLPORT_OAUTH_CLIENTS). */
  clients: readonly StaticClient[]
  /** Accept https client ids described by a Client ID Metadata Document. */
  clientMetadataDocuments: boolean
  /** Fetches client metadata documents (and any other URL a client names) under the outbound address rules. */
  http: HttpClient
}

/** A client metadata document is a small JSON object: more than this is refused, not read. */
const maxFetchedBytes = 64 * 1024

/** oidc-provider's fetch, answered by toolport's outbound client: public addresses only, pinned DNS, no redirects followed. */
function guardedFetch(http: HttpClient): typeof fetch {
  return async (input, init) => {
    const answer = await http.request({
      url: String(input instanceof Request ? input.url : input),
      method: (init?.method ?? 'GET') as 'GET',
      headers: Object.fromEntries(new Headers(init?.headers).entries()),
      timeoutMs: 5_000,
      maxBytes: maxFetchedBytes,
      maxRedirects: 0,
    })
    if (answer.truncated) throw new Error(`the answer is larger than ${maxFetchedBytes} bytes`)
    const empty = answer.status === 204 || answer.status === 304 || (answer.status >= 300 && answer.status < 400)
    return new Response(empty ? null : new Uint8Array(answer.body), { status: answer.status, headers: answer.headers })
  }
}

/** The account id of a person signed in with a key: the key's tenant and a digest of the key, never the key. */
export function accountIdOf(tenant: string, key: string): string {
  return `${tenant}.${createHash('sha256').update(key).digest('base64url').slice(0, 22)}`
}

/** The tenant of an account id (`<tenant>.<digest>`; a tenant may hold dots, a digest never does). */
export function tenantOfAccount(accountId: string): string {
  return accountId.slice(0, accountId.lastIndexOf('.'))
}

/**
 * The signing keys of the built-in server, shared by every instance through the bucket: the first
 * instance creates them (create-if-absent), a second one racing it reads the winner's.
 */
async function signingKeys(storage: ObjectStore): Promise<JWK[]> {
  const stored = await storage.get(oauthKeys.signingKeys)
  if (stored) return (JSON.parse(new TextDecoder().decode(stored.body)) as { keys: JWK[] }).keys
  const { privateKey } = await generateKeyPair('RS256', { extractable: true })
  const jwk = { ...(await exportJWK(privateKey)), kid: crypto.randomUUID(), alg: 'RS256', use: 'sig' }
  if (await storage.create(oauthKeys.signingKeys, JSON.stringify({ keys: [jwk] }))) return [jwk]
  return signingKeys(storage)
}

/** The public halves of the signing keys: what the resource side verifies tokens with, no network needed. */
export function publicKeysOf(keys: readonly JWK[]): JWK[] {
  return keys.map(({ kty, n, e, crv, x, y, kid, alg, use }) =>
    Object.fromEntries(
      Object.entries({ kty, n, e, crv, x, y, kid, alg, use }).filter(([, value]) => value !== undefined),
    ),
  )
}

/**
 * The built-in authorization server: oidc-provider (the certified OpenID/OAuth server library of the
 * Node ecosystem), configured for MCP clients: authorization code with PKCE S256 only, dynamic client
 * registration, resource indicators with JWT access tokens bound to this resource, refresh tokens
 * rotated on every use (a reused one revokes its grant), revocation. toolport supplies the sign-in and
 * consent pages (interactions.ts) and the storage (the bucket).
 */
export async function createBuiltinProvider(options: BuiltinServerOptions): Promise<{
  provider: Provider
  issuer: string
  publicKeys: JWK[]
}> {
  const issuer = `${options.publicUrl}/oauth`
  const resources = new Set([options.publicUrl, `${options.publicUrl}/mcp`])
  const keys = await signingKeys(options.storage)
  const staticIds = new Set(options.clients.map((client) => client.client_id))
  const provider = new Provider(issuer, {
    adapter: createStorageAdapterFactory(options.storage) as never,
    clients: options.clients.map((client) => ({
      ...client,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    })),
    fetch: guardedFetch(options.http),
    jwks: { keys: keys as never },
    cookies: { keys: [options.cookieSecret] },
    scopes: ['openid', 'offline_access', ...scopesSupported],
    claims: { openid: ['sub'] },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      // MCP 2025-11-25: a client identified by the https URL of its metadata, with no registration.
      clientIdMetadataDocument: { enabled: options.clientMetadataDocuments, ack: 'draft-02' },
      // A client revokes only its own tokens.
      revocation: { enabled: true, allowedPolicy: (_context, client, token) => token.clientId === client.clientId },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => `${options.publicUrl}/mcp`,
        useGrantedResource: () => true,
        getResourceServerInfo: (_context, resource) => {
          if (!resources.has(resource))
            throw new errors.InvalidTarget(`this server issues tokens for ${options.publicUrl} only`)
          return {
            scope: scopesSupported.join(' '),
            audience: resource,
            accessTokenTTL: options.accessTokenSeconds,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          }
        },
      },
    },
    // PKCE for every client but the operator's confidential ones (a GPT Action cannot send it); a
    // client that sends a challenge is held to it either way.
    pkce: { required: (_context, client) => !staticIds.has(client.clientId) },
    responseTypes: ['code'],
    rotateRefreshToken: true,
    issueRefreshToken: async (_context, client) => client.grantTypeAllowed('refresh_token'),
    ttl: {
      AccessToken: options.accessTokenSeconds,
      AuthorizationCode: 60,
      Interaction: 600,
      Session: 3600,
      Grant: options.refreshTokenSeconds,
      RefreshToken: options.refreshTokenSeconds,
    },
    interactions: { url: (_context, interaction) => `/oauth/interaction/${interaction.uid}` },
    findAccount: (_context, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    extraTokenClaims: async (_context, token) => {
      const accountId = (token as { accountId?: string }).accountId
      if (!accountId) return undefined
      // The key's tool list caps the token whatever its scopes (the resource side reads toolport_tools).
      const tools = await options.toolLimitOf(accountId)
      return { toolport_tenant: tenantOfAccount(accountId), ...(tools ? { toolport_tools: [...tools] } : {}) }
    },
    clientBasedCORS: () => true,
    // Errors shown to the person (a bad client, a redirect URI that is not registered): a plain page
    // of ours, with the same policy as the sign-in pages, never a redirect to an unverified URI.
    renderError: (context, out) => {
      const page = errorPage(String(out.error ?? 'error'), String(out.error_description ?? ''))
      context.status = Math.max(context.status, 400)
      context.set(page.headers)
      context.body = page.html
    },
  })
  // Behind a load balancer or API Gateway the scheme and host come from X-Forwarded-*.
  provider.proxy = true
  return { provider, issuer, publicKeys: publicKeysOf(keys) }
}
