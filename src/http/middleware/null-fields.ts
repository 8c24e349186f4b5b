import type { MiddlewareHandler } from 'hono'
import type { JsonSchema } from '../../core/json-schema'
import { stripNullOptionalsChanged } from '../../platforms/nulls'
import type { AppEnv } from '../env'

const jsonMediaType = /^application\/([\w.-]+\+)?json$/i

/**
 * Runs before the body validator: reads the JSON body, drops the nulls that strict-mode platforms
 * send for optional fields they leave unset, and hands the validator the result through Hono's body
 * cache. A body that is not JSON is left alone for the validator to refuse with its usual problem.
 */
export function stripNullFields(schemaOf: () => JsonSchema): MiddlewareHandler<AppEnv> {
  // Derived on the route's first call rather than at start: a cold start serves one tool, not all.
  let schema: JsonSchema | undefined
  return async (context, next) => {
    const mediaType = context.req.header('content-type')?.split(';')[0]?.trim() ?? ''
    if (jsonMediaType.test(mediaType)) {
      let body: unknown
      try {
        body = await context.req.json()
      } catch {
        return next()
      }
      schema ??= schemaOf()
      if (stripNullOptionalsChanged(body, schema)) {
        // Hono types the cache as Body's methods, but stores the promises those methods return.
        const cache = context.req.bodyCache as Record<string, unknown>
        cache.text = Promise.resolve(JSON.stringify(body))
        delete cache.json
      }
    }
    await next()
  }
}
