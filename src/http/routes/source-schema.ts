import type { OpenAPIHono } from '@hono/zod-openapi'
import type { AppEnv } from '../env'
import { manifestJsonSchema } from './sources'

/** GET /schemas/source-manifest.json: the JSON Schema of a source manifest, for editors and CI checks. */
export function registerSourceManifestSchemaRoute(app: OpenAPIHono<AppEnv>): void {
  let schema: Record<string, unknown> | undefined
  app.get('/schemas/source-manifest.json', (context) => {
    schema ??= manifestJsonSchema()
    return context.json(schema)
  })
}
