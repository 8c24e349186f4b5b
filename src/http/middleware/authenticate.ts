import type { MiddlewareHandler } from 'hono'
import type { Authenticator } from '../../auth/authenticator'
import { resourceMetadataUrl } from '../../auth/oauth/challenge'
import type { AppEnv } from '../env'

/**
 * Resolves the bearer key to the principal every handler reads (401 without a valid one, whenever
 * keys are configured). Answers are per key, so no cache may keep them.
 */
export function authenticate(
  authenticator: Authenticator,
  options: { noStore: boolean; oauthPublicUrl?: string | undefined },
): MiddlewareHandler<AppEnv> {
  const { oauthPublicUrl } = options
  return async (context, next) => {
    // With OAuth on, every 401 and 403 of this request says where to sign in (problem.ts).
    if (oauthPublicUrl) {
      const path = context.req.path === '/mcp' || context.req.path.startsWith('/mcp/') ? '/mcp' : ''
      context.set('resourceMetadata', resourceMetadataUrl(oauthPublicUrl, path))
    }
    context.set('principal', await authenticator.authenticate(context.req.header('authorization')))
    if (options.noStore) context.header('Cache-Control', 'no-store')
    await next()
  }
}
