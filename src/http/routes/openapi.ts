import type { OpenAPIHono } from '@hono/zod-openapi'
import { ToolError } from '../../core/errors'
import type { ToolRegistry } from '../../registry/registry'
import type { AppEnv } from '../env'

export const serviceDescription =
  'toolport runs tools for LLM platforms and CI: workspace files, shell, web, documents and more. Every tool is one POST /v1/tools/{name} with a JSON body; errors are application/problem+json with a code and a hint.'

type OpenApiDocument = ReturnType<OpenAPIHono['getOpenAPI31Document']>

/**
 * Builds the OpenAPI 3.1 document of the app's routes, then adds what zod-openapi cannot express:
 * each operation's effect, and GPT Actions' consequential flag (only read tools run without asking).
 */
export function buildOpenApiDocument(
  app: OpenAPIHono<AppEnv>,
  registry: ToolRegistry,
  publicUrl: string,
  version: string,
): OpenApiDocument {
  const document = app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: { title: 'toolport', version, description: serviceDescription },
    servers: [{ url: publicUrl }],
    tags: [{ name: 'tools', description: 'One operation per tool.' }],
  })
  const effects = new Map(registry.tools.map((tool) => [tool.name, tool.effect]))
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
  registry: ToolRegistry,
  publicUrl: string,
  version: string,
): void {
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key issued by the operator (TOOLPORT_API_KEYS).',
  })
  let document: OpenApiDocument | undefined
  const known = new Set(registry.tools.map((tool) => tool.name))
  app.get('/openapi.json', (context) => {
    document ??= buildOpenApiDocument(app, registry, publicUrl, version)
    const wanted = context.req.query('tools')
    return context.json(wanted === undefined ? document : subsetDocument(document, parseToolList(wanted, known)))
  })
}

function parseToolList(value: string, known: ReadonlySet<string>): Set<string> {
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '')
  const unknown = names.filter((name) => !known.has(name))
  if (names.length === 0 || unknown.length > 0) {
    const detail =
      names.length === 0 ? 'The tools parameter names no tool.' : `Unknown tool in tools: ${unknown.join(', ')}.`
    throw new ToolError('validation', detail, {
      hint: `Name tools from GET /v1/tools, separated by commas, e.g. tools=${[...known].slice(0, 2).join(',')}.`,
      details: { field: 'tools' },
    })
  }
  return new Set(names)
}

/**
 * The document with only some tools' operations: a custom GPT chooses better among few actions, and
 * each GPT can be given just the tools its job needs.
 */
export function subsetDocument(document: OpenApiDocument, names: ReadonlySet<string>): OpenApiDocument {
  const paths = Object.fromEntries(
    Object.entries(document.paths ?? {}).filter(([, item]) => {
      const operationId = item?.post?.operationId
      return operationId === undefined || names.has(operationId)
    }),
  )
  return { ...document, paths }
}
