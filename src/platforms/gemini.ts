import type { ToolListing } from '../catalog/entry'
import {
  branchesOf,
  isSchema,
  type JsonSchema,
  propertiesOf,
  requiredOf,
  resolveRef,
  typesOf,
} from '../core/json-schema'

export interface GeminiFunctionDeclaration {
  name: string
  description: string
  /** Absent for a tool without inputs: Gemini refuses an object schema with no properties. */
  parameters?: JsonSchema
}

/** What Gemini's Schema (a subset of OpenAPI 3.0) accepts; everything else is dropped or rewritten. */
const kept = new Set(['description', 'minItems', 'maxItems', 'minimum', 'maximum', 'minLength', 'maxLength', 'pattern'])
const formatsByType: Record<string, Set<string>> = {
  string: new Set(['date-time', 'enum']),
  integer: new Set(['int32', 'int64']),
  number: new Set(['float', 'double']),
}
// Inlined references stop here, so a recursive schema still ends.
const maxDepth = 12

export function toGeminiDeclaration(entry: ToolListing): GeminiFunctionDeclaration {
  const parameters = convert(entry.input_schema, entry.input_schema, 0)
  const hasInputs = isSchema(parameters.properties) && Object.keys(parameters.properties).length > 0
  return { name: entry.name, description: entry.description, ...(hasInputs ? { parameters } : {}) }
}

function convert(raw: JsonSchema, root: JsonSchema, depth: number): JsonSchema {
  const schema = resolveRef(raw, root)
  const description = typeof raw.description === 'string' ? raw.description : schema.description
  if (depth > maxDepth || (schema.$ref !== undefined && schema === raw)) {
    return withDescription({ type: 'object' }, description)
  }
  if (Array.isArray(schema.allOf)) return convert(mergeAll(schema.allOf.filter(isSchema)), root, depth)
  const branches = branchesOf(schema)
  if (branches) return convertBranches(branches, root, depth, description)
  const types = typesOf(schema)
  const nullable = types.includes('null') || (Array.isArray(schema.enum) && schema.enum.includes(null))
  const concrete = types.filter((type) => type !== 'null')
  if (concrete.length > 1) {
    return withNullable({ anyOf: concrete.map((type) => convert({ ...schema, type }, root, depth + 1)) }, nullable)
  }
  const type = concrete[0] ?? (typeof schema.const === 'string' ? 'string' : undefined)
  const out: JsonSchema = type ? { type } : {}
  for (const [key, value] of Object.entries(schema)) if (kept.has(key)) out[key] = value
  if (description !== undefined) out.description = description
  if (typeof schema.format === 'string' && type && formatsByType[type]?.has(schema.format)) out.format = schema.format
  exclusiveBounds(schema, out, type)
  const values = schema.const !== undefined ? [schema.const] : Array.isArray(schema.enum) ? schema.enum : undefined
  if (values)
    enumOf(
      values.filter((value) => value !== null),
      out,
    )
  if (type === 'array' && isSchema(schema.items)) out.items = convert(schema.items, root, depth + 1)
  if (type === 'object') {
    const properties = propertiesOf(schema)
    if (properties.length > 0) {
      out.properties = Object.fromEntries(properties.map(([key, value]) => [key, convert(value, root, depth + 1)]))
      const required = [...requiredOf(schema)].filter((key) => properties.some(([name]) => name === key))
      if (required.length > 0) out.required = required
    }
  }
  return withNullable(out, nullable)
}

/** A null branch becomes `nullable`; a single remaining branch needs no anyOf at all. */
function convertBranches(branches: JsonSchema[], root: JsonSchema, depth: number, description: unknown): JsonSchema {
  const concrete = branches.filter((branch) => branch.type !== 'null')
  const nullable = concrete.length < branches.length
  const converted = concrete.map((branch) => convert(branch, root, depth + 1))
  const single = converted.length === 1 ? converted[0] : undefined
  const out = single ?? { anyOf: converted }
  return withNullable(withDescription(out, description), nullable)
}

/** Gemini enums are strings only; other value lists are told to the model instead. */
function enumOf(values: unknown[], out: JsonSchema): void {
  if (values.length > 0 && values.every((value) => typeof value === 'string') && out.type === 'string') {
    out.enum = values
    out.format = 'enum'
    return
  }
  const listed = `One of: ${values.map((value) => JSON.stringify(value)).join(', ')}.`
  out.description = typeof out.description === 'string' ? `${out.description} ${listed}` : listed
}

/** Exclusive bounds become inclusive ones: exact for integers, close enough for numbers. */
function exclusiveBounds(schema: JsonSchema, out: JsonSchema, type: string | undefined): void {
  const step = type === 'integer' ? 1 : 0
  if (typeof schema.exclusiveMinimum === 'number') out.minimum = schema.exclusiveMinimum + step
  if (typeof schema.exclusiveMaximum === 'number') out.maximum = schema.exclusiveMaximum - step
}

function mergeAll(parts: JsonSchema[]): JsonSchema {
  const properties: Record<string, unknown> = {}
  const required = new Set<string>()
  for (const part of parts) {
    for (const [key, value] of propertiesOf(part)) properties[key] = value
    for (const key of requiredOf(part)) required.add(key)
  }
  return { type: 'object', properties, required: [...required] }
}

function withDescription(schema: JsonSchema, description: unknown): JsonSchema {
  return typeof description === 'string' ? { ...schema, description } : schema
}

/** OpenAPI 3.0 ignores `nullable` without a `type`, so a union carries it on each branch instead. */
function withNullable(schema: JsonSchema, nullable: boolean): JsonSchema {
  if (!nullable) return schema
  if (Array.isArray(schema.anyOf) && schema.type === undefined) {
    return { ...schema, anyOf: schema.anyOf.map((branch: JsonSchema) => withNullable(branch, true)) }
  }
  return { ...schema, nullable: true }
}
