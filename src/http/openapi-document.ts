import { OpenAPIHono } from '@hono/zod-openapi'
import type { Tool } from '../tools/tool'
import { decideApproval } from './routes/approvals'
import { cancelJob, getJob } from './routes/jobs'
import { sourceRoutes } from './routes/sources'
import { toolRoute } from './routes/tool-route'

export const serviceDescription =
  'toolport runs tools for LLM platforms and CI: workspace files, shell, web, documents and more. Every tool is one POST /v1/tools/{name} with a JSON body; errors are application/problem+json with a code and a hint.'

export type OpenApiDocument = ReturnType<OpenAPIHono['getOpenAPI31Document']>

export interface DocumentOptions {
  publicUrl: string
  version: string
  /** The source routes (/v1/sources) are shown to keys that may use them. */
  admin: boolean
  /** The published JSON Schemas of a tool (source tools), as the registry holds them. */
  schemasOf(tool: Tool): { input: Record<string, unknown>; output: Record<string, unknown> } | undefined
}

/**
 * The OpenAPI 3.1 document of a catalog: the job routes, one operation per tool, the approval route,
 * then what zod-openapi cannot express: each operation's effect, and GPT Actions' consequential flag
 * (only read tools run without asking). Built for the tools a key sees, so a custom GPT imports exactly
 * what it may call.
 */
export function buildOpenApiDocument(tools: readonly Tool[], options: DocumentOptions): OpenApiDocument {
  const builder = new OpenAPIHono()
  const registry = builder.openAPIRegistry
  registry.registerPath(getJob)
  registry.registerPath(cancelJob)
  for (const tool of tools) {
    const schemas = options.schemasOf(tool)
    if (!schemas) {
      registry.registerPath(toolRoute(tool))
      continue
    }
    // A source tool's own $defs become components, so its $refs resolve inside the document.
    const input = hoistDefinitions(schemas.input, `${tool.name}_input`)
    const output = hoistDefinitions(schemas.output, `${tool.name}_output`)
    for (const [name, schema] of [...input.components, ...output.components]) {
      registry.registerComponent('schemas', name, schema as never)
    }
    registry.registerPath(toolRoute(tool, { input: input.schema, output: output.schema }))
  }
  registry.registerPath(decideApproval)
  if (options.admin) for (const route of sourceRoutes) registry.registerPath(route)
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key issued by the operator (TOOLPORT_API_KEYS).',
  })
  const document = builder.getOpenAPI31Document({
    openapi: '3.1.0',
    info: { title: 'toolport', version: options.version, description: serviceDescription },
    servers: [{ url: options.publicUrl }],
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

/**
 * A JSON Schema with its `$defs` moved out, under names prefixed for the tool, and its `#/$defs/…`
 * references pointed at `#/components/schemas/…`: inside an OpenAPI document a local reference is
 * read from the document's root, not the schema's.
 */
function hoistDefinitions(
  schema: Record<string, unknown>,
  prefix: string,
): { schema: Record<string, unknown>; components: Array<[string, unknown]> } {
  const { $schema: _, $defs, ...rest } = schema
  const definitions = typeof $defs === 'object' && $defs !== null ? ($defs as Record<string, unknown>) : {}
  const nameOf = (definition: string) => `${prefix}_${definition.replace(/[^A-Za-z0-9._-]/g, '_')}`
  const rewrite = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rewrite)
    if (typeof value !== 'object' || value === null) return value
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => {
        if (key === '$ref' && typeof item === 'string') {
          if (item === '#') return [key, `#/components/schemas/${prefix}`]
          const match = /^#\/\$defs\/(.+)$/.exec(item)
          if (match?.[1]) return [key, `#/components/schemas/${nameOf(decodeURIComponent(match[1]))}`]
        }
        return [key, rewrite(item)]
      }),
    )
  }
  const root = rewrite(rest) as Record<string, unknown>
  const components: Array<[string, unknown]> = Object.entries(definitions).map(([name, definition]) => [
    nameOf(name),
    rewrite(definition),
  ])
  // A schema that refers to itself ($ref: "#") needs its own component.
  if (JSON.stringify(root).includes(`"#/components/schemas/${prefix}"`)) components.push([prefix, root])
  return { schema: root, components }
}
