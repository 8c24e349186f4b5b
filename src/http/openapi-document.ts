import { OpenAPIHono } from '@hono/zod-openapi'
import type { CatalogEntry } from '../catalog/entry'
import type { Tool } from '../tools/tool'
import { decideApproval, listApprovals, showApproval } from './routes/approvals'
import { cancelJob, getJob } from './routes/jobs'
import { operationRoutes } from './routes/operations'
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
  /** The published JSON Schemas of a tool (source tools), as the catalog holds them. */
  schemasOf(entry: CatalogEntry): { input: Record<string, unknown>; output: Record<string, unknown> } | undefined
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
export function buildOpenApiDocument(listed: readonly CatalogEntry[], options: DocumentOptions): OpenApiDocument {
  return assembled(listed, options, filled)
}

/**
 * The same document as JSON text, byte for byte what JSON.stringify(buildOpenApiDocument(…)) writes,
 * without building or serialising a thousand operation objects: each variant's operation is serialised
 * once with placeholders, and a source tool's operation is that text with its own values written in.
 */
export function openApiDocumentText(listed: readonly CatalogEntry[], options: DocumentOptions): string {
  // Placeholders and markers carry a nonce, so no text of a tool's own can be taken for one.
  const nonce = crypto.randomUUID()
  const operations: string[] = []
  // By template and effect: a variant groups every effect but read, and x-effect names the tool's own.
  const templates = new Map<Record<string, unknown>, Map<string, TemplateText>>()
  const skeleton = assembled(listed, options, (template, tool, input, output) => {
    let byEffect = templates.get(template)
    if (!byEffect) {
      byEffect = new Map()
      templates.set(template, byEffect)
    }
    let text = byEffect.get(tool.effect)
    if (!text) {
      text = templateText(template, tool, nonce)
      byEffect.set(tool.effect, text)
    }
    operations.push(text.fill(tool, input, output))
    return `\u0002${nonce}:${operations.length - 1}`
  })
  const marker = new RegExp(`"\\\\u0002${nonce}:(\\d+)"`, 'g')
  return JSON.stringify(skeleton).replace(marker, (_, index: string) => operations[Number(index)] as string)
}

type Operation = (
  template: Record<string, unknown>,
  tool: Tool,
  input: Record<string, unknown>,
  output: Record<string, unknown>,
) => unknown

function assembled(listed: readonly CatalogEntry[], options: DocumentOptions, operationOf: Operation): OpenApiDocument {
  // Tools the document describes by a REST route of their own (the job tools) have no POST operation.
  const entries = listed.filter((entry) => !entry.describedBy)
  const builtins = entries.filter((entry) => !options.schemasOf(entry)).map((entry) => entry.tool)
  const document = cachedGenerated(builtins, {
    ...options,
    describedElsewhere: listed.filter((entry) => entry.describedBy).map((entry) => entry.tool),
  })
  const sourced = entries.filter((entry) => options.schemasOf(entry))
  if (sourced.length === 0) return document
  const templates = new Map<string, Record<string, unknown>>()
  const paths: Record<string, unknown> = {}
  const schemas = (document.components?.schemas ?? {}) as Record<string, unknown>
  for (const entry of sourced) {
    const { tool } = entry
    const declared = options.schemasOf(entry) as { input: Record<string, unknown>; output: Record<string, unknown> }
    const input = hoistDefinitions(declared.input, `${tool.name}_input`)
    const output = hoistDefinitions(declared.output, `${tool.name}_output`)
    for (const [name, schema] of [...input.components, ...output.components]) schemas[name] = schema
    const variant = `${tool.effect === 'read'}:${tool.dryRun !== undefined}`
    let template = templates.get(variant)
    if (!template) {
      template = templateOperation(tool) as Record<string, unknown>
      templates.set(variant, template)
    }
    paths[`/v1/tools/${tool.name}`] = { post: operationOf(template, tool, input.schema, output.schema) }
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
  if (options.admin) for (const route of [...sourceRoutes, ...operationRoutes]) registry.registerPath(route)
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

interface TemplateText {
  fill(tool: Tool, input: Record<string, unknown>, output: Record<string, unknown>): string
}

/**
 * A variant's operation as JSON text cut at the values that are each tool's own: the schemas (whole
 * JSON values) and the name, title and description (inside strings, since the 200 answer's text holds
 * the title).
 */
function templateText(template: Record<string, unknown>, like: Tool, nonce: string): TemplateText {
  const placeholder = (key: string) => `\u0001${nonce}:${key}`
  const stand = {
    ...like,
    name: placeholder('name'),
    title: placeholder('title'),
    description: placeholder('description'),
  }
  const text = JSON.stringify(filled(template, stand, placeholder('input') as never, placeholder('output') as never))
  const cut = new RegExp(`"\\\\u0001${nonce}:(input|output)"|\\\\u0001${nonce}:(name|title|description)`, 'g')
  const literals: string[] = []
  const slots: string[] = []
  let last = 0
  for (const match of text.matchAll(cut)) {
    const at = match.index ?? 0
    literals.push(text.slice(last, at))
    slots.push((match[1] ?? match[2]) as string)
    last = at + match[0].length
  }
  literals.push(text.slice(last))
  const inString = (value: string) => JSON.stringify(value).slice(1, -1)
  return {
    fill(tool, input, output) {
      const values: Record<string, string> = {
        input: JSON.stringify(input),
        output: JSON.stringify(output),
        name: inString(tool.name),
        title: inString(tool.title),
        description: inString(tool.description),
      }
      let out = literals[0] as string
      for (let index = 0; index < slots.length; index++) {
        out += `${values[slots[index] as string]}${literals[index + 1]}`
      }
      return out
    },
  }
}

/**
 * The template's operation for this tool. Only the parts that differ are new objects: the rest (query
 * parameters, the 202 and error answers) is the template's own, shared by every operation of the
 * variant, so a thousand tools cost no thousand deep copies; nothing writes to a built document.
 */
function filled(
  operation: Record<string, unknown>,
  tool: Tool,
  input: Record<string, unknown>,
  output: Record<string, unknown>,
): Record<string, unknown> {
  type Content = Record<string, { schema?: unknown }>
  const requestBody = operation.requestBody as { content: Content }
  const responses = operation.responses as Record<string, { description?: string; content?: Content }>
  const ok = responses['200']
  const okJson = ok?.content?.['application/json']
  // With a dry run the 200 is { anyOf: [output, dry-run answer] }: only the output is this tool's own.
  const okSchema = okJson?.schema as { anyOf?: unknown[] } | undefined
  const okOwn = Array.isArray(okSchema?.anyOf) ? { ...okSchema, anyOf: [output, ...okSchema.anyOf.slice(1)] } : output
  const withSchema = (content: Content, schema: unknown): Content => ({
    ...content,
    'application/json': { ...content['application/json'], schema },
  })
  return {
    ...operation,
    operationId: tool.name,
    summary: tool.title,
    description: tool.description,
    requestBody: { ...requestBody, content: withSchema(requestBody.content, input) },
    responses: {
      ...responses,
      ...(ok
        ? {
            '200': {
              ...ok,
              // The template is another tool's operation: every text that names the tool is this one's.
              description: tool.dryRun
                ? `${tool.title}: result; with dry_run=true, { dry_run: true, preview }.`
                : `${tool.title}: result.`,
              ...(ok.content ? { content: okJson ? withSchema(ok.content, okOwn) : ok.content } : {}),
            },
          }
        : {}),
    },
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
  // Most schemas refer to nothing: used as they are (nothing writes to a document), without a copy.
  if (Object.keys(definitions).length === 0 && !hasReference(rest)) return { schema: rest, components: [] }
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

/** Whether a `$ref` appears anywhere in the value. */
function hasReference(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false
  if (Array.isArray(value)) return value.some(hasReference)
  for (const key in value) {
    if (key === '$ref' || hasReference((value as Record<string, unknown>)[key])) return true
  }
  return false
}
