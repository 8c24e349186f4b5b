import type { ToolListing } from '../catalog/entry'
import { branchesOf, isSchema, type JsonSchema, propertiesOf, requiredOf, typesOf } from '../core/json-schema'

export interface OpenAiTool {
  type: 'function'
  function: { name: string; description: string; parameters: JsonSchema; strict: boolean }
}

/**
 * Keywords OpenAI's strict mode (Structured Outputs) accepts, per type. Anything else is rejected by
 * the API, so it is dropped here; the service still validates the full schema when the call arrives.
 */
const keptEverywhere = ['type', 'description', 'enum', 'const', 'anyOf', '$ref']
const keptByType: Record<string, string[]> = {
  object: ['properties', 'required', 'additionalProperties'],
  array: ['items', 'minItems', 'maxItems'],
  string: ['pattern', 'format'],
  number: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  integer: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
}
const supportedFormats = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid'])

/** Thrown for shapes strict mode cannot express (free-form maps, allOf, untyped values). */
class NotStrict extends Error {}

export function toOpenAiTool(entry: ToolListing): OpenAiTool {
  const base = { name: entry.name, description: entry.description }
  try {
    return { type: 'function', function: { ...base, parameters: strictRoot(entry.input_schema), strict: true } }
  } catch (error) {
    if (!(error instanceof NotStrict)) throw error
    // Better a tool the model may call loosely than one the API refuses outright.
    const { $schema: _, ...parameters } = entry.input_schema
    return { type: 'function', function: { ...base, parameters, strict: false } }
  }
}

function strictRoot(schema: JsonSchema): JsonSchema {
  if (schema.type !== 'object') throw new NotStrict('the root must be an object')
  const converted = strict(schema)
  if (isSchema(schema.$defs)) {
    converted.$defs = Object.fromEntries(
      Object.entries(schema.$defs).map(([name, definition]) => [name, strict(definition as JsonSchema)]),
    )
  }
  return converted
}

function strict(schema: JsonSchema): JsonSchema {
  if (typeof schema.$ref === 'string') return { $ref: schema.$ref }
  if (schema.allOf || schema.not || schema.prefixItems || schema.patternProperties) throw new NotStrict('unsupported')
  const branches = branchesOf(schema)
  const types = typesOf(schema)
  if (!branches && types.length === 0 && schema.enum === undefined && schema.const === undefined) {
    throw new NotStrict('a value of any type')
  }
  const kept = new Set([...keptEverywhere, ...types.flatMap((type) => keptByType[type] ?? [])])
  const out: JsonSchema = {}
  for (const [key, value] of Object.entries(schema)) {
    if (kept.has(key) && value !== undefined) out[key] = value
  }
  if (typeof out.format === 'string' && !supportedFormats.has(out.format)) delete out.format
  const note = lengthNote(schema)
  if (note) out.description = out.description ? `${out.description} ${note}` : note
  if (schema.oneOf) delete out.oneOf
  if (branches) {
    // A value that may take several shapes keeps those strict mode can express (http_fetch's headers: a
    // list of { name, value } pairs rather than a free-form map); the service accepts every shape.
    const expressible = branches.flatMap((branch) => {
      try {
        return [strict(branch)]
      } catch (error) {
        if (error instanceof NotStrict) return []
        throw error
      }
    })
    if (expressible.length === 0) throw new NotStrict('no branch strict mode can express')
    if (expressible.length === 1 && types.length === 0) {
      const [only] = expressible as [JsonSchema]
      delete out.anyOf
      return { ...only, ...(out.description ? { description: out.description } : {}) }
    }
    out.anyOf = expressible
  }
  if (types.includes('array')) {
    if (!isSchema(schema.items)) throw new NotStrict('an array without an item schema')
    out.items = strict(schema.items)
  }
  if (types.includes('object')) Object.assign(out, strictObject(schema))
  return out
}

function strictObject(schema: JsonSchema): JsonSchema {
  if (isSchema(schema.additionalProperties)) throw new NotStrict('a map with free-form keys')
  const required = requiredOf(schema)
  const properties = propertiesOf(schema)
  return {
    properties: Object.fromEntries(
      properties.map(([key, property]) => {
        const converted = strict(property)
        return [key, required.has(key) ? converted : nullable(converted)]
      }),
    ),
    required: properties.map(([key]) => key),
    additionalProperties: false,
  }
}

/** Strict mode has no optional fields: an optional field becomes required and may be null. */
export function nullable(schema: JsonSchema): JsonSchema {
  const { description, ...rest } = schema
  const withDescription = (value: JsonSchema) => (description === undefined ? value : { ...value, description })
  const branches = branchesOf(rest)
  if (branches) {
    if (branches.some((branch) => branch.type === 'null')) return schema
    return withDescription({ ...rest, anyOf: [...branches, { type: 'null' }] })
  }
  const types = typesOf(rest)
  if (types.length === 0 || rest.$ref !== undefined || rest.const !== undefined) {
    return withDescription({ anyOf: [rest, { type: 'null' }] })
  }
  const out: JsonSchema = { ...rest, type: types.includes('null') ? types : [...types, 'null'] }
  if (Array.isArray(rest.enum) && !rest.enum.includes(null)) out.enum = [...rest.enum, null]
  return withDescription(out)
}

/** Length limits strict mode cannot enforce are still worth telling the model, when one could hit them. */
function lengthNote(schema: JsonSchema): string | undefined {
  const { minLength, maxLength } = schema
  const tight = typeof maxLength === 'number' && maxLength <= 1000
  if (tight && typeof minLength === 'number' && minLength > 1) return `(${minLength}-${maxLength} characters)`
  if (tight) return `(at most ${maxLength} characters)`
  if (typeof minLength === 'number' && minLength > 1) return `(at least ${minLength} characters)`
  return undefined
}
