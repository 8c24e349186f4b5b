import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Catalog } from '../../catalog/catalog'
import { ToolError } from '../../core/errors'
import { catalogFormats, formatCatalog, isCatalogFormat } from '../../platforms/formats'
import type { AppEnv } from '../env'
import { assertKnownQuery } from '../query'

/** GET /v1/tools: the part of the catalog the calling key may use, in toolport's or a platform's format. */
export function registerCatalogRoute(app: OpenAPIHono<AppEnv>, catalog: Catalog): void {
  app.get('/v1/tools', async (context) => {
    assertKnownQuery(context.req.url, ['format'])
    const format = context.req.query('format') ?? 'toolport'
    if (!isCatalogFormat(format)) {
      throw new ToolError('validation', `Unknown catalog format ${JSON.stringify(format)}.`, {
        hint: `Use format=${catalogFormats.filter((name) => name !== 'toolport').join(', format=')}, or omit it for the toolport catalog.`,
        details: { field: 'format' },
      })
    }
    const view = await catalog.view(context.get('principal'))
    // The revision comes from the toolport entries, so it is the same whichever format is asked for.
    // Tools whose source is not ready (or gone) are listed apart, never among the tools a model is given.
    return context.json({
      revision: view.revision,
      format,
      tools: formatCatalog(format, view.listings),
      unavailable: view.unavailable,
    })
  })
}
