import Ajv from 'ajv'
import Ajv2020 from 'ajv/dist/2020'
import addFormats from 'ajv-formats'
import type { JsonSchema } from '../../src/core/json-schema'

// Strict compilers: an unknown keyword or a contradictory schema fails the test, as it would fail the platform.
export function compiler(draft: '2020' | '07') {
  const options = { strict: true, allowUnionTypes: true, allErrors: true }
  const ajv = draft === '2020' ? new Ajv2020(options) : new Ajv(options)
  addFormats(ajv)
  // Gemini marks string enums with format "enum"; it is a label, not a constraint.
  ajv.addFormat('enum', true)
  return ajv
}

/** Calls visit on every subschema, with its depth of object nesting. */
export function walk(schema: unknown, visit: (schema: JsonSchema, depth: number) => void, depth = 0): void {
  if (Array.isArray(schema)) {
    for (const item of schema) walk(item, visit, depth)
    return
  }
  if (typeof schema !== 'object' || schema === null) return
  const node = schema as JsonSchema
  visit(node, depth)
  const inner = depth + (node.type === 'object' || (Array.isArray(node.type) && node.type.includes('object')) ? 1 : 0)
  for (const key of ['items', 'anyOf', 'oneOf', 'allOf', 'additionalProperties', 'not']) walk(node[key], visit, inner)
  for (const key of ['properties', '$defs']) {
    if (typeof node[key] === 'object' && node[key] !== null)
      for (const sub of Object.values(node[key])) walk(sub, visit, inner)
  }
}

export const hasFreeFormMap = (schema: JsonSchema) => {
  let found = false
  walk(schema, (node) => {
    if (
      typeof node.additionalProperties === 'object' ||
      node.allOf ||
      (node.type === undefined && !node.anyOf && !node.$ref && node.enum === undefined && node.const === undefined)
    )
      found = true
  })
  return found
}
