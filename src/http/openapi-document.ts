import { OpenAPIHono } from '@hono/zod-openapi'
import type { Tool } from '../tools/tool'
import { decideApproval, listApprovals, showApproval } from './routes/approvals'
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
  /** Documents of built-in sets already generated (as JSON), by their tools and flags: kept by the caller. */
  generatedCache?: Map<string, string>
  /** Tools whose operation is another route's (set by buildOpenApiDocument). */
  describedElsewhere?: readonly Tool[]
}

/**
 * The OpenAPI 3.1 document of a catalog: the job routes, one operation per tool, the approval route,
 * then what zod-openapi cannot express: each operation's effect, and GPT Actions' consequential flag
 * (only read tools run without asking). Built for the tools a key sees, so a custom GPT imports exactly
 * what it may call. Built-ins are described by zod-openapi from their zod schemas; a source tool's
 * operation is a template of the same shape filled with its JSON Schemas, so a catalog of a thousand
 * source tools costs copies, not a thousand schema conversions.
 */
export function buildOpenApiDocument(listed: readonly Tool[], options: DocumentOptions): OpenApiDocument {
  // Tools the document describes by a REST route of their own (the job tools) have no POST operation.
  const tools = listed.filter((tool) => !tool.describedBy)
  const builtins = tools.filter((tool) => !options.schemasOf(tool))
  const document = cachedGenerated(builtins, {
    ...options,
    describedElsewhere: listed.filter((tool) => tool.describedBy),
  })
  const sourced = tools.filter((tool) => options.schemasOf(tool))
  if (sourced.length === 0) return document
  const templates = new Map<string, string>()
  const paths: Record<string, unknown> = {}
  const schemas = (document.components?.schemas ?? {}) as Record<string, unknown>
  for (const tool of sourced) {
    const declared = options.schemasOf(tool) as { input: Record<string, unknown>; output: Record<string, unknown> }
    const input = hoistDefinitions(declared.input, `${tool.name}_input`)
    const output = hoistDefinitions(declared.output, `${tool.name}_output`)
    for (const [name, schema] of [...input.components, ...output.components]) schemas[name] = schema
    const variant = `${tool.effect === 'read'}:${tool.dryRun !== undefined}`
    let template = templates.get(variant)
    if (!template) {
      template = JSON.stringify(templateOperation(tool))
      templates.set(variant, template)
    }
    paths[`/v1/tools/${tool.name}`] = { post: filled(JSON.parse(template), tool, input.schema, output.schema) }
  }
  // Source tools follow the built-ins, before the routes that come after the tools.
  const ordered: Record<string, unknown> = {}
  let inserted = false
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    if (!inserted && !path.startsWith('/v1/tools/') && !path.startsWith('/v1/jobs/')) {
      Object.assign(ordered, paths)
      inserted = true
    }
    ordered[path] = item
  }
  if (!inserted) Object.assign(ordered, paths)
  return {
    ...document,
    paths: ordered as OpenApiDocument['paths'],
    components: { ...document.components, schemas },
  } as OpenApiDocument
}

/** generated(), once per set of built-ins and flags: a copy of it (the caller adds to it). */
function cachedGenerated(builtins: readonly Tool[], options: DocumentOptions): OpenApiDocument {
  const cache = options.generatedCache
  if (!cache) return generated(builtins, options)
  const key = `${options.admin}:${options.publicUrl}:${[...builtins, ...(options.describedElsewhere ?? [])].map((tool) => tool.name).join(',')}`
  let text = cache.get(key)
  if (text === undefined) {
    text = JSON.stringify(generated(builtins, options))
    cache.set(key, text)
    if (cache.size > 16) cache.delete(cache.keys().next().value as string)
  }
  return JSON.parse(text) as OpenApiDocument
}

/** The document zod-openapi generates for the static routes and the built-in tools. */
function generated(builtins: readonly Tool[], options: DocumentOptions): OpenApiDocument {
  const builder = new OpenAPIHono()
  const registry = builder.openAPIRegistry
  registry.registerPath(getJob)
  registry.registerPath(cancelJob)
  for (const tool of builtins) registry.registerPath(toolRoute(tool))
  registry.registerPath(listApprovals)
  registry.registerPath(showApproval)
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
  // Tools described by another route (the job tools) carry their effect there, under the same operationId.
  const effects = new Map([...builtins, ...(options.describedElsewhere ?? [])].map((tool) => [tool.name, tool.effect]))
  for (const pathItem of Object.values(document.paths ?? {})) {
    for (const operation of [pathItem.post, pathItem.get, pathItem.delete]) {
      const effect = operation?.operationId ? effects.get(operation.operationId) : undefined
      if (!operation || !effect) continue
      Object.assign(operation, { 'x-effect': effect, 'x-openai-isConsequential': effect !== 'read' })
    }
  }
  return document
}

const placeholder = { type: 'object' }

/** The operation zod-openapi makes for a tool like this one (same effect class, same dry-run flag). */
function templateOperation(tool: Tool): unknown {
  const builder = new OpenAPIHono()
  builder.openAPIRegistry.registerPath(toolRoute(tool, { input: placeholder, output: placeholder }))
  const document = builder.getOpenAPI31Document({ openapi: '3.1.0', info: { title: 't', version: '0' } })
  return document.paths?.[`/v1/tools/${tool.name}`]?.post
}

function filled(
  operation: Record<string, unknown>,
  tool: Tool,
  input: Record<string, unknown>,
  output: Record<string, unknown>,
): Record<string, unknown> {
  const requestBody = operation.requestBody as { content: Record<string, { schema: unknown }> }
  const responses = operation.responses as Record<string, { content?: Record<string, { schema: unknown }> }>
  const okContent = responses['200']?.content?.['application/json']
  ;(requestBody.content['application/json'] as { schema: unknown }).schema = input
  // With a dry run the 200 is { anyOf: [output, dry-run answer] }: only the output is this tool's own.
  const okSchema = okContent?.schema as { anyOf?: unknown[] } | undefined
  if (okContent && Array.isArray(okSchema?.anyOf)) okSchema.anyOf[0] = output
  else if (okContent) okContent.schema = output
  // The template is another tool's operation: every text that names the tool is this one's.
  const ok = responses['200'] as { description?: string } | undefined
  if (ok) {
    ok.description = tool.dryRun
      ? `${tool.title}: result; with dry_run=true, { dry_run: true, preview }.`
      : `${tool.title}: result.`
  }
  return {
    ...operation,
    operationId: tool.name,
    summary: tool.title,
    description: tool.description,
    'x-effect': tool.effect,
    'x-openai-isConsequential': tool.effect !== 'read',
  }
}

/**
 * The document with only some tools' operations: a custom GPT chooses better among few actions, and
 * each GPT can be given just the tools its job needs.
 */
export function subsetDocument(document: OpenApiDocument, names: ReadonlySet<string>): OpenApiDocument {
  const paths = Object.fromEntries(
    Object.entries(document.paths ?? {}).filter(([path, item]) => {
      // The approver's inbox is for approver keys, not part of a GPT's chosen tools.
      if (path.startsWith('/v1/approvals')) return false
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
