import { randomBytes } from 'node:crypto'
import type { HttpBindings } from '@hono/node-server'
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response'
import type { OAuthServerMount } from '../../app'
import { createAuthenticator } from '../../auth/authenticator'
import type { Config } from '../../config/config'
import type { Logger } from '../../core/logger'
import type { ObjectStore } from '../../storage/store'
import { createBuiltinOAuthServer } from './handler'

/**
 * The built-in authorization server for the Node runtime (TOOLPORT_OAUTH_ISSUER=builtin), mounted at
 * /oauth: oidc-provider and the pages speak Node's request and response, which @hono/node-server hands
 * through as the request's bindings. Loaded only when configured.
 */
export async function nodeOAuthServer(
  config: Config,
  storage: ObjectStore,
  log: Logger,
): Promise<OAuthServerMount | undefined> {
  const publicUrl = config.http.configuredPublicUrl
  if (config.oauth.issuer !== 'builtin' || !publicUrl) return undefined
  if (!config.downloads.signingSecret) {
    log.warn('TOOLPORT_SIGNING_SECRET is not set: sign-ins in progress break when this process restarts')
  }
  const server = await createBuiltinOAuthServer({
    publicUrl,
    storage,
    cookieSecret: config.downloads.signingSecret ?? randomBytes(32).toString('base64url'),
    authenticator: createAuthenticator(config.apiKeys),
    keys: config.apiKeys,
    accessTokenSeconds: config.oauth.accessTokenSeconds,
    refreshTokenSeconds: config.oauth.refreshTokenSeconds,
    log,
  })
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
