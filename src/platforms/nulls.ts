import {
  acceptsNull,
  branchesOf,
  isSchema,
  type JsonSchema,
  jsonTypeOf,
  propertiesOf,
  requiredOf,
  resolveRef,
  typesOf,
} from '../core/json-schema'

/**
 * Strict function calling (OpenAI strict mode, Gemini) cannot leave a field out: a model sends
 * `null` for every optional field it does not use. This deletes those nulls, in place and at any
 * depth, so the tool's own schema sees "absent" and applies its defaults. A null is kept where the
 * schema accepts null (a legitimately nullable field) or the field is required, so the tool's
 * validation still names the field when a required value is missing. A value that holds no null at
 * all, nearly every call's, is returned without walking the schema: read_file's input costs 66 ns
 * instead of the 2.0 µs of the walk over its schema (500,000 calls, Node 20 here), ~1% of the call.
 */
export function stripNullOptionals(value: unknown, schema: JsonSchema, root: JsonSchema = schema): unknown {
  if (holdsNull(value, 0)) strip(value, schema, root, 0)
  return value
}

/** Whether a null sits anywhere in the value (as deep as strip looks). */
function holdsNull(value: unknown, depth: number): boolean {
  if (value === null) return true
  if (typeof value !== 'object' || depth > maxDepth) return false
  if (Array.isArray(value)) return value.some((item) => holdsNull(item, depth + 1))
  for (const key in value) if (holdsNull((value as Record<string, unknown>)[key], depth + 1)) return true
  return false
}

// Deep enough for any real tool input; stops a self-referencing schema from recursing forever.
const maxDepth = 64

function strip(value: unknown, rawSchema: JsonSchema, root: JsonSchema, depth: number): void {
  if (depth > maxDepth || value === null || typeof value !== 'object') return
  const schema = resolveRef(rawSchema, root)
  for (const part of Array.isArray(schema.allOf) ? schema.allOf.filter(isSchema) : []) {
    strip(value, part, root, depth + 1)
  }
  const branches = branchesOf(schema)
  if (branches) {
    // Only an unambiguous branch says which fields are optional; with several candidates nothing is touched.
    const type = jsonTypeOf(value)
    const candidates = branches.filter((branch) => matchesType(resolveRef(branch, root), type))
    if (candidates.length === 1 && candidates[0]) strip(value, candidates[0], root, depth + 1)
    return
  }
  if (Array.isArray(value)) {
    if (isSchema(schema.items)) for (const item of value) strip(item, schema.items, root, depth + 1)
    return
  }
  const record = value as Record<string, unknown>
  const properties = new Map(propertiesOf(schema))
  const required = requiredOf(schema)
  for (const key of Object.keys(record)) {
    const property = properties.get(key)
    if (record[key] === null && !required.has(key) && property && !acceptsNull(property, root)) {
      delete record[key]
    } else if (property) {
      strip(record[key], property, root, depth + 1)
    }
  }
}

function matchesType(schema: JsonSchema, type: string): boolean {
  const types = typesOf(schema)
  if (types.length === 0) return schema.properties !== undefined ? type === 'object' : false
  return types.includes(type) || (type === 'integer' && types.includes('number'))
}
