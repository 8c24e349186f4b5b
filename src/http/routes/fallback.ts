import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Catalog } from '../../catalog/catalog'
import { ToolError } from '../../core/errors'
import type { AppEnv } from '../env'
import { problemResponse } from '../problem'

/** What no route answers: another method on a tool (405), an unknown tool, any other path (404). */
export function registerFallbacks(app: OpenAPIHono<AppEnv>, catalog: Catalog): void {
  app.all('/v1/tools/:name', async (context) => {
    const name = context.req.param('name')
    // not_found (with the source's state for a tool that is gone) before method_not_allowed.
    await catalog.resolve(context.get('principal').tenant, name)
    throw new ToolError('method_not_allowed', `${context.req.method} is not allowed on ${name}.`, {
      hint: `Call ${name} with POST and a JSON body.`,
      headers: { Allow: 'POST' },
    })
  })
  // The app's routes as patterns, made on the first miss (every route is registered by then).
  let patterns: Array<{ method: string; pattern: RegExp }> | undefined
  const methodsFor = (path: string): string[] => {
    patterns ??= app.routes
      .filter((route) => route.method !== 'ALL' && !route.path.includes('*'))
      .map((route) => ({
        method: route.method,
        pattern: new RegExp(`^${route.path.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/:[^/]+/g, '[^/]+')}$`),
      }))
    return [...new Set(patterns.filter((route) => route.pattern.test(path)).map((route) => route.method))]
  }
  app.notFound((context) => {
    const { method, path } = context.req
    // A route that exists under other methods is 405 with Allow, as HTTP asks, not "no such route".
    const allowed = methodsFor(path)
    // A route of this very method that found nothing (an unknown docs asset) is a 404 like any other.
    const sameMethod = allowed.includes(method) || (method === 'HEAD' && allowed.includes('GET'))
    if (allowed.length > 0 && !sameMethod) {
      return problemResponse(
        context,
        new ToolError('method_not_allowed', `${method} is not allowed on ${path}.`, {
          hint: `Use ${allowed.join(' or ')} on ${path}.`,
          headers: { Allow: allowed.join(', ') },
        }),
      )
    }
    return problemResponse(
      context,
      new ToolError('not_found', `No route for ${method} ${path}.`, {
        hint: 'Tools are called with POST /v1/tools/{name}; GET /v1/tools lists them and /docs documents them.',
      }),
    )
  })
}
