import { randomBytes } from 'node:crypto'
import type { HttpBindings } from '@hono/node-server'
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response'
import type { Fleet, OAuthServerMount } from '../../app'
import { createAuthenticator } from '../../auth/authenticator'
import type { Config } from '../../config/config'
import type { Audit } from '../../core/audit'
import type { Logger } from '../../core/logger'
import { createTokenBuckets } from '../../http/middleware/rate-limit'
import { createNodeHttpClient } from '../../net/node-http'
import type { ObjectStore } from '../../storage/store'
import { type BuiltinOAuthServer, createBuiltinOAuthServer } from './handler'
import { createUpstreamSignIn } from './upstream'

/** The built-in server from the configuration, for any Node-based runtime (Node, Lambda). */
export async function builtinOAuthServer(
  config: Config,
  storage: ObjectStore,
  log: Logger,
  fleet?: Pick<Fleet, 'rateLimiter'>,
  audit?: Audit,
): Promise<BuiltinOAuthServer | undefined> {
  const publicUrl = config.http.configuredPublicUrl
  if (config.oauth.issuer !== 'builtin' || !publicUrl) return undefined
  if (!config.downloads.signingSecret) {
    log.warn('TOOLPORT_SIGNING_SECRET is not set: sign-ins in progress break when this process restarts')
  }
  const cookieSecret = config.downloads.signingSecret ?? randomBytes(32).toString('base64url')
  const { upstream, rateLimit } = config.oauthServer
  return createBuiltinOAuthServer({
    publicUrl,
    storage,
    cookieSecret,
    authenticator: createAuthenticator(config.apiKeys),
    keys: config.apiKeys,
    accessTokenSeconds: config.oauth.accessTokenSeconds,
    refreshTokenSeconds: config.oauth.refreshTokenSeconds,
    clients: config.oauthServer.clients,
    clientMetadataDocuments: config.oauthServer.clientMetadataDocuments,
    http: createNodeHttpClient({ policy: { allowHosts: config.net.allowHosts } }),
    ...(upstream
      ? { upstream: { signIn: createUpstreamSignIn(upstream, publicUrl, cookieSecret), scopes: upstream.scopes } }
      : {}),
    rateLimit: { limit: rateLimit, limiter: fleet?.rateLimiter(rateLimit) ?? createTokenBuckets(rateLimit) },
    log,
    ...(audit ? { audit } : {}),
  })
}

/**
 * The built-in authorization server for the Node runtime (TOOLPORT_OAUTH_ISSUER=builtin), mounted at
 * /oauth: oidc-provider and the pages speak Node's request and response, which @hono/node-server hands
 * through as the request's bindings. Loaded only when configured.
 */
export async function nodeOAuthServer(
  config: Config,
  storage: ObjectStore,
  log: Logger,
  fleet?: Pick<Fleet, 'rateLimiter'>,
  audit?: Audit,
): Promise<OAuthServerMount | undefined> {
  const server = await builtinOAuthServer(config, storage, log, fleet, audit)
  if (!server) return undefined
  return {
    issuer: server.issuer,
    publicKeys: server.publicKeys,
    async serve(context) {
      const { incoming, outgoing } = context.env as unknown as HttpBindings
      await server.handle(incoming, outgoing)
      return RESPONSE_ALREADY_SENT
    },
  }
}
