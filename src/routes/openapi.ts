import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Tool } from '../tools/tool'
import type { AppEnv } from './env'

export const serviceDescription =
  'toolport runs tools for LLM platforms and CI: workspace files, shell, web, documents and more. Every tool is one POST /v1/tools/{name} with a JSON body; errors are application/problem+json with a code and a hint.'

type OpenApiDocument = ReturnType<OpenAPIHono['getOpenAPI31Document']>

/**
 * Builds the OpenAPI 3.1 document of the app's routes, then adds what zod-openapi cannot express:
 * each operation's effect, and GPT Actions' consequential flag (only read tools run without asking).
 */
export function buildOpenApiDocument(
  app: OpenAPIHono<AppEnv>,
  tools: readonly Tool[],
  publicUrl: string,
  version: string,
): OpenApiDocument {
  const document = app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: { title: 'toolport', version, description: serviceDescription },
    servers: [{ url: publicUrl }],
    tags: [{ name: 'tools', description: 'One operation per tool.' }],
  })
  const effects = new Map(tools.map((tool) => [tool.name, tool.effect]))
  for (const pathItem of Object.values(document.paths ?? {})) {
    const operation = pathItem.post
    const effect = operation?.operationId ? effects.get(operation.operationId) : undefined
    if (!operation || !effect) continue
    Object.assign(operation, { 'x-effect': effect, 'x-openai-isConsequential': effect !== 'read' })
  }
  return document
}

export function registerOpenApiRoute(
  app: OpenAPIHono<AppEnv>,
  tools: readonly Tool[],
  publicUrl: string,
  version: string,
): void {
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key issued by the operator (TOOLPORT_API_KEYS).',
  })
  let document: OpenApiDocument | undefined
  app.get('/openapi.json', (context) => {
    document ??= buildOpenApiDocument(app, tools, publicUrl, version)
    return context.json(document)
  })
}
