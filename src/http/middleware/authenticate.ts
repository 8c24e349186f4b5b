import type { MiddlewareHandler } from 'hono'
import type { Authenticator } from '../../auth/authenticator'
import { resourceMetadataUrl } from '../../auth/oauth/challenge'
import { type Audit, serviceAuditTenant } from '../../core/audit'
import { isToolError } from '../../core/errors'
import type { Logger } from '../../core/logger'
import type { AppEnv } from '../env'

/**
 * Resolves the bearer key to the principal every handler reads (401 without a valid one, whenever
 * keys are configured). Answers are per key, so no cache may keep them.
 */
export function authenticate(
  authenticator: Authenticator,
  options: { noStore: boolean; oauthPublicUrl?: string | undefined; audit?: Audit; log?: Logger },
): MiddlewareHandler<AppEnv> {
  const { oauthPublicUrl, audit } = options
  // Anyone can send a thousand wrong keys a second: at most 30 a minute per instance become audit
  // records (each is a write to the bucket); the rest are counted in one log line a minute.
  let window = 0
  let recorded = 0
  async function refused(context: Parameters<MiddlewareHandler<AppEnv>>[0], error: unknown): Promise<void> {
    if (!audit?.enabled || !isToolError(error) || error.code !== 'unauthenticated') return
    // No credential at all is how every client starts (and how OAuth discovery begins): not a refusal of a key.
    if (!context.req.header('authorization')) return
    const minute = Math.floor(Date.now() / 60_000)
    if (minute !== window) {
      if (recorded > 30) options.log?.warn('refused keys not kept in the audit log', { count: recorded - 30 })
      window = minute
      recorded = 0
    }
    if (++recorded > 30) return
    await audit.record({
      tenant: serviceAuditTenant,
      principal: 'unknown',
      action: 'auth.refused',
      target: `${context.req.method} ${context.req.path}`.slice(0, 200),
      outcome: 'refused',
      requestId: context.get('requestId'),
      details: { reason: error.message.slice(0, 200) },
    })
  }
  return async (context, next) => {
    // With OAuth on, every 401 and 403 of this request says where to sign in (problem.ts).
    if (oauthPublicUrl) {
      const path = context.req.path === '/mcp' || context.req.path.startsWith('/mcp/') ? '/mcp' : ''
      context.set('resourceMetadata', resourceMetadataUrl(oauthPublicUrl, path))
    }
    try {
      context.set('principal', await authenticator.authenticate(context.req.header('authorization')))
    } catch (error) {
      await refused(context, error)
      throw error
    }
    if (options.noStore) context.header('Cache-Control', 'no-store')
    await next()
  }
}
