import type { MiddlewareHandler } from 'hono'
import type { Authenticator } from '../../auth/authenticator'
import type { AppEnv } from '../env'

/**
 * Resolves the bearer key to the principal every handler reads (401 without a valid one, whenever
 * keys are configured). Answers are per key, so no cache may keep them.
 */
export function authenticate(authenticator: Authenticator, options: { noStore: boolean }): MiddlewareHandler<AppEnv> {
  return async (context, next) => {
    context.set('principal', await authenticator.authenticate(context.req.header('authorization')))
    if (options.noStore) context.header('Cache-Control', 'no-store')
    await next()
  }
}
