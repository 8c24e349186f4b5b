/** A JSON Schema object as z.toJSONSchema emits it (draft 2020-12). */
export type JsonSchema = Record<string, unknown>

export function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The subschemas under `properties` (own keys only: a property may be called "__proto__"). */
export function propertiesOf(schema: JsonSchema): Array<[string, JsonSchema]> {
  const properties = schema.properties
  if (!isSchema(properties)) return []
  return Object.entries(properties).filter((entry): entry is [string, JsonSchema] => isSchema(entry[1]))
}

export function requiredOf(schema: JsonSchema): Set<string> {
  return new Set(Array.isArray(schema.required) ? schema.required.filter((key) => typeof key === 'string') : [])
}

export function typesOf(schema: JsonSchema): string[] {
  if (typeof schema.type === 'string') return [schema.type]
  return Array.isArray(schema.type) ? schema.type.filter((type) => typeof type === 'string') : []
}

export function branchesOf(schema: JsonSchema): JsonSchema[] | undefined {
  const branches = schema.anyOf ?? schema.oneOf
  return Array.isArray(branches) ? branches.filter(isSchema) : undefined
}

/** Follows a local `#/$defs/...` reference; anything else is returned unchanged. */
export function resolveRef(schema: JsonSchema, root: JsonSchema): JsonSchema {
  if (typeof schema.$ref !== 'string') return schema
  const match = /^#\/\$defs\/(.+)$/.exec(schema.$ref)
  const defs = root.$defs
  if (!match?.[1] || !isSchema(defs)) return schema
  const target = defs[decodeURIComponent(match[1])]
  return isSchema(target) ? target : schema
}

/** Whether null is a valid value: explicitly allowed, or a schema that constrains nothing. */
export function acceptsNull(schema: JsonSchema, root: JsonSchema, seen = new Set<JsonSchema>()): boolean {
  if (seen.has(schema)) return false
  seen.add(schema)
  const resolved = resolveRef(schema, root)
  if (resolved !== schema) return acceptsNull(resolved, root, seen)
  if (schema.nullable === true || schema.const === null) return true
  if (Array.isArray(schema.enum)) return schema.enum.includes(null)
  const branches = branchesOf(schema)
  if (branches) return branches.some((branch) => acceptsNull(branch, root, seen))
  if (schema.type === undefined && schema.const === undefined && schema.$ref === undefined && !schema.allOf) {
    return schema.not === undefined
  }
  return typesOf(schema).includes('null')
}

/** The JSON type of a value, in JSON Schema's words. */
export function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  return typeof value
}

/**
 * The property names of the object a path in a value leads to (["customization"], ["edits", 0]),
 * read from the schema: array items, references and object branches followed. Undefined when the
 * path leaves what the schema describes.
 */
export function propertyNamesAt(root: JsonSchema, path: readonly PropertyKey[]): string[] | undefined {
  let schema: JsonSchema | undefined = root
  for (const step of path) {
    if (!schema) return undefined
    schema = objectBranch(resolveRef(schema, root), root)
    if (typeof step === 'number') {
      schema = isSchema(schema.items) ? schema.items : undefined
    } else {
      schema = propertiesOf(schema).find(([name]) => name === String(step))?.[1]
    }
  }
  if (!schema) return undefined
  const names = propertiesOf(objectBranch(resolveRef(schema, root), root)).map(([name]) => name)
  return names.length > 0 ? names : undefined
}

function objectBranch(schema: JsonSchema, root: JsonSchema): JsonSchema {
  const branches = branchesOf(schema)
  if (!branches) return schema
  const found = branches
    .map((branch) => resolveRef(branch, root))
    .find((branch) => branch.type === 'object' || branch.type === 'array' || isSchema(branch.properties))
  return found ?? schema
}
