import type { Effect } from '../../core/effects'
import { effects } from '../../core/effects'
import { toolNamePattern } from '../declared'
import { publishable } from '../published-text'
import type { JsonSchema } from '../schema-compiler'

/** How one OpenAPI operation becomes a tool: its name, schemas, and where each input field goes. */
export interface OperationPlan {
  name: string
  title: string
  description: string
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  /** The path template, e.g. /pets/{petId}. */
  path: string
  effect: Effect
  pathParams: string[]
  queryParams: string[]
  /** flat: the JSON body's properties are top-level input fields; property: the body is the `body` field. */
  body: { mode: 'none' } | { mode: 'flat'; fields: string[] } | { mode: 'property' }
  input: JsonSchema
  output: JsonSchema | undefined
}

const methods = ['get', 'post', 'put', 'patch', 'delete'] as const
const effectByMethod: Record<(typeof methods)[number], Effect> = {
  get: 'read',
  post: 'write',
  put: 'write',
  patch: 'write',
  delete: 'destructive',
}

/**
 * Every operation of a document, as tool plans. Operations without an operationId get one from the
 * method and path; names that clash or do not fit are reported in `skipped`, not fatal.
 */
export function planOperations(
  document: JsonSchema,
  options: { only?: readonly string[] | undefined; effects?: Readonly<Record<string, Effect>> | undefined },
): { plans: OperationPlan[]; skipped: string[] } {
  const components = asObject(document.components)
  const plans: OperationPlan[] = []
  const skipped: string[] = []
  const names = new Set<string>()
  for (const [path, rawItem] of Object.entries(asObject(document.paths))) {
    const item = asObject(rawItem)
    for (const method of methods) {
      const operation = asObject(item[method])
      if (Object.keys(operation).length === 0) continue
      const name = operationName(operation, method, path)
      if (options.only && !options.only.includes(name)) continue
      if (!toolNamePattern.test(name) || names.has(name)) {
        skipped.push(
          `${method.toUpperCase()} ${path} (${JSON.stringify(name)} is ${names.has(name) ? 'taken' : 'not a valid tool name'})`,
        )
        continue
      }
      names.add(name)
      const parameters = [...asList(item.parameters), ...asList(operation.parameters)].map((parameter) =>
        resolveComponent(parameter, components),
      )
      plans.push(planOf({ name, method, path, operation, parameters, components, effects: options.effects }))
    }
  }
  return { plans, skipped }
}

function operationName(operation: JsonSchema, method: string, path: string): string {
  if (typeof operation.operationId === 'string') return operation.operationId
  const slug = path
    .replace(/[{}]/g, '')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
  return `${method}_${slug}`.slice(0, 64)
}

function planOf(parts: {
  name: string
  method: (typeof methods)[number]
  path: string
  operation: JsonSchema
  parameters: JsonSchema[]
  components: JsonSchema
  effects: Readonly<Record<string, Effect>> | undefined
}): OperationPlan {
  const { operation, components } = parts
  const properties: Record<string, unknown> = {}
  const required: string[] = []
  const pathParams: string[] = []
  const queryParams: string[] = []
  // Latest declaration wins, as OpenAPI lets an operation override a path-level parameter.
  for (const parameter of parts.parameters) {
    const name = typeof parameter.name === 'string' ? parameter.name : undefined
    if (!name || (parameter.in !== 'path' && parameter.in !== 'query')) continue
    const schema = asObject(parameter.schema)
    properties[name] = {
      ...schema,
      ...(typeof parameter.description === 'string' && schema.description === undefined
        ? { description: parameter.description }
        : {}),
    }
    const list = parameter.in === 'path' ? pathParams : queryParams
    if (!list.includes(name)) list.push(name)
    if ((parameter.in === 'path' || parameter.required === true) && !required.includes(name)) required.push(name)
  }
  const requestBody = resolveComponent(operation.requestBody, components)
  const bodySchema = asObject(asObject(asObject(requestBody.content)['application/json']).schema)
  let body: OperationPlan['body'] = { mode: 'none' }
  if (Object.keys(bodySchema).length > 0) {
    const flat = resolveComponent(bodySchema, components, 'schemas')
    const bodyProperties = asObject(flat.properties)
    const clash = Object.keys(bodyProperties).some((field) => field in properties)
    if (flat.type === 'object' && Object.keys(bodyProperties).length > 0 && !clash) {
      Object.assign(properties, bodyProperties)
      for (const field of asList(flat.required)) if (typeof field === 'string') required.push(field)
      body = { mode: 'flat', fields: Object.keys(bodyProperties) }
    } else {
      properties.body = bodySchema
      if (requestBody.required === true) required.push('body')
      body = { mode: 'property' }
    }
  }
  const input: JsonSchema = { type: 'object', properties, ...(required.length ? { required } : {}) }
  const declaredEffect = operation['x-toolport-effect']
  const effect =
    parts.effects?.[parts.name] ??
    (typeof declaredEffect === 'string' && (effects as readonly string[]).includes(declaredEffect)
      ? (declaredEffect as Effect)
      : effectByMethod[parts.method])
  const summary = typeof operation.summary === 'string' ? operation.summary : undefined
  const description = typeof operation.description === 'string' ? operation.description : undefined
  return {
    name: parts.name,
    // The document's text, cleaned of what platforms may refuse in a tool list (published-text.ts).
    title: publishable(summary ?? parts.name, 'line').slice(0, 100),
    description: publishable(description ?? summary ?? `${parts.method.toUpperCase()} ${parts.path}`, 'text').slice(
      0,
      1024,
    ),
    method: parts.method.toUpperCase() as OperationPlan['method'],
    path: parts.path,
    effect,
    pathParams,
    queryParams,
    body,
    input: withDefinitions(input, components),
    output: outputOf(operation, components),
  }
}

/** The schema of the first 2xx JSON response (else `default`), as an object: a bare value is { result }. */
function outputOf(operation: JsonSchema, components: JsonSchema): JsonSchema | undefined {
  const responses = asObject(operation.responses)
  const status =
    Object.keys(responses).find((code) => /^2\d\d$/.test(code)) ?? ('default' in responses ? 'default' : undefined)
  if (!status) return undefined
  const response = resolveComponent(responses[status], components)
  const schema = asObject(asObject(asObject(response.content)['application/json']).schema)
  if (Object.keys(schema).length === 0) return undefined
  const flat = resolveComponent(schema, components, 'schemas')
  const output =
    flat.type === 'object' ? schema : { type: 'object', properties: { result: schema }, required: ['result'] }
  return withDefinitions(output, components)
}

/** Follows a `#/components/{kind}/{name}` reference (parameters, request bodies, responses, schemas). */
function resolveComponent(value: unknown, components: JsonSchema, kind?: string): JsonSchema {
  let current = asObject(value)
  for (let hops = 0; hops < 8 && typeof current.$ref === 'string'; hops++) {
    const match = /^#\/components\/([^/]+)\/(.+)$/.exec(current.$ref)
    if (!match?.[1] || !match[2] || (kind && match[1] !== kind)) return current
    current = asObject(asObject(components[match[1]])[decodeURIComponent(match[2])])
  }
  return current
}

/**
 * A self-contained schema: references to `#/components/schemas/X` become `#/$defs/X`, with the
 * schemas they reach (transitively) copied into `$defs`.
 */
function withDefinitions(schema: JsonSchema, components: JsonSchema): JsonSchema {
  const schemas = asObject(components.schemas)
  const defs: Record<string, unknown> = {}
  const pending: string[] = []
  const rewrite = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rewrite)
    if (typeof value !== 'object' || value === null) return value
    const out: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(value)) {
      const match = key === '$ref' && typeof item === 'string' ? /^#\/components\/schemas\/(.+)$/.exec(item) : null
      if (match?.[1]) {
        const name = decodeURIComponent(match[1])
        if (!(name in defs) && !pending.includes(name)) pending.push(name)
        out.$ref = `#/$defs/${encodeURIComponent(name)}`
      } else out[key] = rewrite(item)
    }
    return out
  }
  const root = rewrite(schema) as JsonSchema
  while (pending.length > 0) {
    const name = pending.shift() as string
    defs[name] = rewrite(schemas[name] ?? {})
  }
  return Object.keys(defs).length > 0 ? { ...root, $defs: defs } : root
}

function asObject(value: unknown): JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonSchema) : {}
}

function asList(value: unknown): unknown[] {
  return Array.isArray(value) ? value : []
}
