import type { OpenAPIHono } from '@hono/zod-openapi'
import { ToolError } from '../../core/errors'
import { buildContext, type ContextDeps, renderContext } from '../context-document'
import type { AppEnv } from '../env'
import { assertKnownQuery } from '../query'
import { parseWorkspace } from '../workspace-param'

export type { ContextDeps } from '../context-document'

/**
 * GET /v1/context: what a platform can put in its system prompt so the model knows the workspace,
 * the limits and its tools before its first call, instead of spending calls to find out.
 */
export function registerContextRoute(app: OpenAPIHono<AppEnv>, deps: ContextDeps): void {
  app.get('/v1/context', async (context) => {
    assertKnownQuery(context.req.url, ['workspace', 'format'])
    const workspaceId = parseWorkspace(context.req.query('workspace') ?? context.get('principal').defaultWorkspace)
    const format = context.req.query('format') ?? 'text'
    if (format !== 'text' && format !== 'json') {
      throw new ToolError('validation', `Unknown context format ${JSON.stringify(format)}.`, {
        hint: 'Use format=text (the default) or format=json.',
        details: { field: 'format' },
      })
    }
    const document = await buildContext(deps, context.get('principal'), workspaceId)
    if (format === 'json') return context.json(document)
    return context.text(renderContext(document))
  })
}
