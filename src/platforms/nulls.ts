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
 * validation still names the field when a required value is missing.
 */
export function stripNullOptionals(value: unknown, schema: JsonSchema, root: JsonSchema = schema): unknown {
  strip(value, schema, root, 0)
  return value
}

/** Like stripNullOptionals, and says whether it removed anything. */
export function stripNullOptionalsChanged(value: unknown, schema: JsonSchema): boolean {
  const removed = { count: 0 }
  strip(value, schema, schema, 0, removed)
  return removed.count > 0
}

// Deep enough for any real tool input; stops a self-referencing schema from recursing forever.
const maxDepth = 64

function strip(value: unknown, rawSchema: JsonSchema, root: JsonSchema, depth: number, removed = { count: 0 }): void {
  if (depth > maxDepth || value === null || typeof value !== 'object') return
  const schema = resolveRef(rawSchema, root)
  for (const part of Array.isArray(schema.allOf) ? schema.allOf.filter(isSchema) : []) {
    strip(value, part, root, depth + 1, removed)
  }
  const branches = branchesOf(schema)
  if (branches) {
    // Only an unambiguous branch says which fields are optional; with several candidates nothing is touched.
    const type = jsonTypeOf(value)
    const candidates = branches.filter((branch) => matchesType(resolveRef(branch, root), type))
    if (candidates.length === 1 && candidates[0]) strip(value, candidates[0], root, depth + 1, removed)
    return
  }
  if (Array.isArray(value)) {
    if (isSchema(schema.items)) for (const item of value) strip(item, schema.items, root, depth + 1, removed)
    return
  }
  const record = value as Record<string, unknown>
  const properties = new Map(propertiesOf(schema))
  const required = requiredOf(schema)
  for (const key of Object.keys(record)) {
    const property = properties.get(key)
    if (record[key] === null && !required.has(key) && property && !acceptsNull(property, root)) {
      delete record[key]
      removed.count++
    } else if (property) {
      strip(record[key], property, root, depth + 1, removed)
    }
  }
}

function matchesType(schema: JsonSchema, type: string): boolean {
  const types = typesOf(schema)
  if (types.length === 0) return schema.properties !== undefined ? type === 'object' : false
  return types.includes(type) || (type === 'integer' && types.includes('number'))
}
