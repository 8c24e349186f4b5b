import type { OpenAPIHono } from '@hono/zod-openapi'
import { ToolError } from '../../core/errors'
import type { ToolRegistry } from '../../registry/registry'
import type { AppEnv } from '../env'
import { problemResponse } from '../problem'

/** What no route answers: another method on a tool (405), an unknown tool, any other path (404). */
export function registerFallbacks(app: OpenAPIHono<AppEnv>, registry: ToolRegistry): void {
  app.all('/v1/tools/:name', async (context) => {
    const name = context.req.param('name')
    // not_found (with the source's state for a tool that is gone) before method_not_allowed.
    await registry.resolve(context.get('principal').tenant, name)
    throw new ToolError('method_not_allowed', `${context.req.method} is not allowed on ${name}.`, {
      hint: `Call ${name} with POST and a JSON body.`,
      headers: { Allow: 'POST' },
    })
  })
  app.notFound((context) =>
    problemResponse(
      context,
      new ToolError('not_found', `No route for ${context.req.method} ${context.req.path}.`, {
        hint: 'Tools are called with POST /v1/tools/{name}; GET /v1/tools lists them and /docs documents them.',
      }),
    ),
  )
}
