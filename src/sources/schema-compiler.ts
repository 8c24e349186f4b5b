import { z } from 'zod'
import { ToolError } from '../core/errors'
import type { AnyZodObject } from '../tools/tool'
import { escapedUnpublishable, publishable, unpublishableCharacter } from './published-text'

/** Bounds on a declared JSON Schema: a hostile manifest must not cost the service more than this. */
export const schemaLimits = {
  /** Serialized size of one schema. */
  bytes: 256 * 1024,
  /** Nesting of schema objects and arrays. */
  depth: 32,
  /** Schema nodes (objects) in one schema. */
  nodes: 5_000,
  /** Characters of one `pattern`. */
  patternChars: 512,
  /**
   * Schema nodes with every `$ref` expanded in place: what checking one value may visit, each branch of
   * a combinator in turn. 2 KB of `anyOf` over the next level twice, 21 levels deep, is 2^21 nodes,
   * and checking one wrong value against it held the event loop for 7 to 17 s.
   */
  expandedNodes: 50_000,
}

export type JsonSchema = Record<string, unknown>

/** A declared schema as toolport publishes it (catalog, OpenAPI, MCP) and as it validates with it. */
export interface CompiledSchema {
  /** The schema normalized to draft 2020-12, with the author's keywords, descriptions and patterns. */
  published: JsonSchema
  /** What calls are checked against: the published schema without patterns (see validatorOf). */
  validator: AnyZodObject
}

export interface CompileOptions {
  root: 'object' | 'any'
  /**
   * What to do with a title or description holding a character platforms may refuse (published-text.ts):
   * refuse it (a manifest, which its tenant can fix; the default), or drop the character (an upstream's
   * schema). A property name holding one is refused either way: the upstream expects that very name.
   */
  text?: 'refuse' | 'clean'
}

/**
 * A JSON Schema a source declares (draft 2020-12, draft 7, or OpenAPI 3.0's dialect), bounded and
 * normalized, and made into the zod schema toolport validates with. Throws ToolError validation naming
 * `field` (a dotted path into the manifest) and what is wrong.
 */
export function compileSchema(schema: unknown, field: string, options: CompileOptions): CompiledSchema {
  if (!isObject(schema)) throw invalid(field, 'must be a JSON Schema object')
  const text = JSON.stringify(schema)
  if (text.length > schemaLimits.bytes) {
    throw invalid(field, `is ${text.length} bytes; a schema may have at most ${schemaLimits.bytes}`)
  }
  const normalized = normalize(schema, field, 0, { count: 0, text: options.text ?? 'refuse' }) as JsonSchema
  assertRefsLead(normalized, field)
  assertBoundedExpansion(normalized, field)
  if (options.root === 'object' && !acceptsObjects(normalized)) {
    throw invalid(field, 'must describe an object (type: "object"), since tool input and output are JSON objects')
  }
  try {
    return { published: normalized, validator: z.fromJSONSchema(validatorOf(normalized) as never) as AnyZodObject }
  } catch (error) {
    throw invalid(field, (error as Error).message.replace(/\.$/, ''))
  }
}

/**
 * Every `$ref` must point at a schema of this document, and no schema may come back to itself through
 * `$ref`s and combinators alone (allOf, anyOf, oneOf, not, if/then/else), without a property or an
 * item between: `a: {$ref: b}, b: {$ref: a}`, or `{allOf: [{$ref: "#"}]}`, describes no value, and
 * validating with it recursed until the stack ran out, which every call then met as "the input nests
 * too deeply". Recursion through properties or items (a tree) is fine.
 */
function assertRefsLead(root: JsonSchema, field: string): void {
  const resolve = (pointer: string): unknown => pointerTarget(root, pointer)
  // The schemas a value must match as a whole, beside this one: where a cycle would never end.
  const sameValue = (node: JsonSchema, path: string): Array<{ schema: unknown; path: string }> => {
    const next: Array<{ schema: unknown; path: string }> = []
    if (typeof node.$ref === 'string') {
      const target = resolve(node.$ref)
      if (!isObject(target) && typeof target !== 'boolean') {
        throw invalid(`${path}.$ref`, `${JSON.stringify(node.$ref.slice(0, 100))} points at no schema of this document`)
      }
      next.push({ schema: target, path: `${path}.$ref` })
    }
    for (const key of ['allOf', 'anyOf', 'oneOf']) {
      const list = node[key]
      if (!Array.isArray(list)) continue
      for (const [index, schema] of list.entries()) next.push({ schema, path: `${path}.${key}.${index}` })
    }
    for (const key of ['not', 'if', 'then', 'else'])
      if (node[key] !== undefined) next.push({ schema: node[key], path: `${path}.${key}` })
    return next
  }
  const done = new Set<unknown>()
  const onPath = new Set<unknown>()
  // `start`: where the search began, the field a refusal names (a path through $refs is no field).
  const follow = (node: unknown, path: string, start: string): void => {
    if (!isObject(node) || done.has(node)) return
    if (onPath.has(node)) {
      throw invalid(
        start,
        'leads back to itself through $refs and combinators alone (no property or item between), so it describes no value',
      )
    }
    onPath.add(node)
    for (const step of sameValue(node, path)) follow(step.schema, step.path, start)
    onPath.delete(node)
    done.add(node)
  }
  // Every schema of the document, each the start of a search (not const, enum or default values).
  const visit = (node: unknown, path: string): void => {
    if (!isObject(node)) return
    follow(node, path, path)
    for (const [key, value] of Object.entries(node)) {
      if (schemaMaps.has(key) && isObject(value)) {
        for (const [name, schema] of Object.entries(value)) visit(schema, `${path}.${key}.${name}`)
      } else if ((schemaLists.has(key) || key === 'prefixItems') && Array.isArray(value)) {
        for (const [index, schema] of value.entries()) visit(schema, `${path}.${key}.${index}`)
      } else if (schemaValues.has(key)) visit(value, `${path}.${key}`)
    }
  }
  visit(root, field)
}

/**
 * The schema's size with its `$ref`s expanded, bounded (schemaLimits.expandedNodes): each definition is
 * counted where it is used, as many times as it is used, so reuse that multiplies (a combinator over the
 * same definition, level after level) is refused where it grows. Recursion through a property or an
 * item is bounded by the input, but only if each level of the input is checked against it once: a
 * schema that reaches itself twice for the same part of the value (two branches of a combinator, both
 * recursing into property `c`) doubles the work with every level of nesting, and is refused too.
 */
function assertBoundedExpansion(root: JsonSchema, field: string): void {
  const sizes = new Map<object, number>()
  /**
   * The schemas being expanded: the part of the value (a path of properties and items) each checks, and
   * the parts for which its own expansion reached it again (once each, or it doubles per level).
   */
  const onPath = new Map<object, { value: string; path: string; again: Set<string> }>()
  let backEdges = 0
  const size = (node: unknown, path: string, value: string): number => {
    if (!isObject(node)) return 1
    const entered = onPath.get(node)
    if (entered) {
      backEdges++
      const below = value.slice(entered.value.length)
      if (entered.again.has(below)) {
        throw invalid(
          entered.path,
          `reaches itself more than once for the same part of a value (${below || 'the value itself'}), so checking a value against it doubles with every level the value nests; recurse through one branch only`,
        )
      }
      entered.again.add(below)
      return 1
    }
    const known = sizes.get(node)
    if (known !== undefined) return known
    onPath.set(node, { value, path, again: new Set() })
    const backEdgesBefore = backEdges
    let total = 1
    const add = (child: unknown, at: string, childValue: string) => {
      total += size(child, at, childValue)
      if (total > schemaLimits.expandedNodes) {
        throw invalid(
          path,
          `grows to more than ${schemaLimits.expandedNodes} schema nodes when its $refs are expanded (every branch of a combinator is checked in turn), so checking one call against it could hold the service; use each definition fewer times`,
        )
      }
    }
    // A definition is named where it is written, which is where its author can change it.
    if (typeof node.$ref === 'string') add(pointerTarget(root, node.$ref), `${field}${pointerPath(node.$ref)}`, value)
    for (const [key, child] of Object.entries(node)) {
      // Definitions are counted where they are used, not where they are written.
      if (key === '$defs') continue
      // Combinators check the same value; every other keyword a part of it.
      const same =
        key === 'allOf' ||
        key === 'anyOf' ||
        key === 'oneOf' ||
        key === 'not' ||
        key === 'if' ||
        key === 'then' ||
        key === 'else'
      if (schemaMaps.has(key) && isObject(child)) {
        for (const [name, schema] of Object.entries(child))
          add(schema, `${path}.${key}.${name}`, `${value}/${key}:${name}`)
      } else if (schemaLists.has(key) && Array.isArray(child)) {
        for (const [index, schema] of child.entries()) {
          add(schema, `${path}.${key}.${index}`, same ? value : `${value}/${key}:${index}`)
        }
      } else if (schemaValues.has(key)) add(child, `${path}.${key}`, same ? value : `${value}/${key}`)
    }
    onPath.delete(node)
    // A size found through a recursion depends on where the expansion came from: it is not reused, so
    // a second way into the same schema is looked at again (and its recursions counted again).
    if (backEdges === backEdgesBefore) sizes.set(node, total)
    return total
  }
  size(root, field, '')
}

/** A local `$ref` as a dotted field path below the schema's own (#/$defs/a → .$defs.a). */
function pointerPath(pointer: string): string {
  return pointer === '#' ? '' : `.${pointer.slice(2).split('/').map(percentDecoded).join('.')}`
}

/** What a local `$ref` (a JSON Pointer fragment) names in the document; undefined when nothing. */
function pointerTarget(root: JsonSchema, pointer: string): unknown {
  let at: unknown = root
  for (const raw of pointer === '#' ? [] : pointer.slice(2).split('/')) {
    // A fragment's JSON Pointer: percent-decoded (openapi-operations.ts encodes names), then ~1 and ~0.
    const key = percentDecoded(raw).replaceAll('~1', '/').replaceAll('~0', '~')
    at = isObject(at) ? at[key] : Array.isArray(at) ? at[Number(key)] : undefined
  }
  return at
}

function percentDecoded(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

function acceptsObjects(schema: JsonSchema): boolean {
  if (schema.type === undefined) return true
  return schema.type === 'object' || (Array.isArray(schema.type) && schema.type.includes('object'))
}

// Keywords whose value is a map of names to schemas, a list of schemas, or one schema (2020-12 and draft 7).
const schemaMaps = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'])
const schemaLists = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems'])
const schemaValues = new Set([
  'items',
  'additionalItems',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
])

/**
 * A copy of the schema with OpenAPI 3.0's and draft 7's spellings made 2020-12's (nullable, definitions,
 * an implied object type), every `$ref` local, and every pattern a valid regular expression.
 * `walk.count` counts schema objects across the whole schema; depth is per path.
 */
function normalize(value: unknown, field: string, depth: number, walk: Walk): unknown {
  if (depth > schemaLimits.depth) throw invalid(field, `nests deeper than ${schemaLimits.depth} levels`)
  // true and false are schemas too (anything, nothing).
  if (typeof value === 'boolean') return value
  if (!isObject(value)) throw invalid(field, 'must be a JSON Schema object')
  walk.count++
  if (walk.count > schemaLimits.nodes) throw invalid(field, `has more than ${schemaLimits.nodes} schema nodes`)
  const out: JsonSchema = {}
  for (const [key, item] of Object.entries(value)) {
    const at = `${field}.${key}`
    // An own "__proto__" key would set the prototype of a plain object copy.
    if (key === '__proto__') throw invalid(at, 'is not a usable property name')
    if (schemaMaps.has(key)) {
      if (!isObject(item)) throw invalid(at, 'must be an object of schemas')
      const map: JsonSchema = {}
      for (const [name, schema] of Object.entries(item)) {
        if (name === '__proto__') throw invalid(`${at}.${name}`, 'is not a usable property name')
        const bad = key === 'properties' ? unpublishableCharacter(name, 'line') : undefined
        if (bad)
          throw invalid(
            `${at}.${escapedUnpublishable(name.slice(0, 100))}`,
            `holds ${bad}, which platforms may refuse in a property name`,
          )
        if (key === 'patternProperties') checkedPattern(name, `${at}.${name}`)
        map[name] = normalize(schema, `${at}.${name}`, depth + 1, walk)
      }
      out[key === 'definitions' ? '$defs' : key] = map
    } else if (schemaLists.has(key)) {
      if (!Array.isArray(item)) throw invalid(at, 'must be a list of schemas')
      out[key] = item.map((schema, index) => normalize(schema, `${at}.${index}`, depth + 1, walk))
    } else if (schemaValues.has(key)) {
      // Draft 7's tuple form of items is 2020-12's prefixItems.
      if (key === 'items' && Array.isArray(item)) {
        out.prefixItems = item.map((schema, index) => normalize(schema, `${at}.${index}`, depth + 1, walk))
      } else out[key] = normalize(item, at, depth + 1, walk)
    } else if (key === '$ref') out.$ref = localRef(item, at)
    else if (key === 'pattern') out.pattern = checkedPattern(item, at)
    else if ((key === 'title' || key === 'description') && typeof item === 'string') {
      out[key] = publishedText(item, key === 'title' ? 'line' : 'text', at, walk)
    }
    // OpenAPI's nullable is folded into type below; examples only document.
    else if (key !== 'nullable' && key !== 'example' && key !== 'examples') out[key] = checkedKeyword(key, item, at)
  }
  if (value.nullable === true) makeNullable(out)
  // A schema with properties but no type is an object schema to its author; zod would accept anything.
  if (out.type === undefined && (isObject(out.properties) || Array.isArray(out.required))) out.type = 'object'
  return out
}

// The validation keywords whose value the JSON Schema meta-schema fixes: a schema that gets one wrong
// (`minLength: "x"`) would be published as it is and checked as something else, or not at all.
const counts = new Set([
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'minContains',
  'maxContains',
])
const numbers = new Set(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'])
const typeNames = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'])

/** A keyword's value as the meta-schema requires it (the ones toolport validates with), else a 400. */
function checkedKeyword(key: string, value: unknown, field: string): unknown {
  if (counts.has(key) && !(Number.isInteger(value) && (value as number) >= 0)) {
    throw invalid(field, 'must be a non-negative integer')
  }
  // OpenAPI 3.0 spells exclusiveMinimum/Maximum as booleans beside minimum/maximum.
  if (numbers.has(key) && typeof value !== 'number' && !(key.startsWith('exclusive') && typeof value === 'boolean')) {
    throw invalid(field, 'must be a number')
  }
  if (key === 'multipleOf' && !((value as number) > 0)) throw invalid(field, 'must be greater than 0')
  if (key === 'type') {
    const names = Array.isArray(value) ? value : [value]
    if (names.length === 0 || !names.every((name) => typeof name === 'string' && typeNames.has(name))) {
      throw invalid(field, `must be one of ${[...typeNames].join(', ')}, or a list of them`)
    }
  }
  if (key === 'required' && !(Array.isArray(value) && value.every((name) => typeof name === 'string'))) {
    throw invalid(field, 'must be a list of property names')
  }
  if (key === 'enum' && !Array.isArray(value)) throw invalid(field, 'must be a list of values')
  return value
}

interface Walk {
  count: number
  text: 'refuse' | 'clean'
}

function publishedText(text: string, kind: 'line' | 'text', field: string, walk: Walk): string {
  if (walk.text === 'clean') return publishable(text, kind)
  const bad = unpublishableCharacter(text, kind)
  if (bad) throw invalid(field, `holds ${bad}, which platforms may refuse in a published schema`)
  return text
}

function makeNullable(schema: JsonSchema): void {
  if (typeof schema.type === 'string') schema.type = [schema.type, 'null']
  else if (Array.isArray(schema.type) && !schema.type.includes('null')) schema.type = [...schema.type, 'null']
  else if (Array.isArray(schema.enum) && !schema.enum.includes(null)) schema.enum = [...schema.enum, null]
}

/** Only references inside the schema itself: a remote one would make validation fetch from anywhere. */
function localRef(value: unknown, field: string): string {
  if (typeof value !== 'string') throw invalid(field, 'must be a string')
  const definitions = /^#\/definitions\/(.*)$/.exec(value)
  if (definitions) return `#/$defs/${definitions[1]}`
  if (value === '#' || value.startsWith('#/')) return value
  throw invalid(field, `${JSON.stringify(value.slice(0, 100))} is not a local reference (#/…); inline the schema`)
}

/**
 * The schema calls are validated with. A declared pattern would run against every call's input on the
 * service's own thread, and a pattern can backtrack exponentially ((a+)+$): toolport does not run
 * them. They stay in the published schema for the model and the platform, and the upstream, which
 * declared them, checks them. Without its patternProperties, additionalProperties cannot be judged either.
 */
function validatorOf(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(validatorOf)
  if (!isObject(schema)) return schema
  const out: JsonSchema = {}
  const patterned = isObject(schema.patternProperties)
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'pattern' || key === 'patternProperties' || (patterned && key === 'additionalProperties')) continue
    if (key === 'enum' || key === 'const' || key === 'default' || key === 'required' || key === 'type') out[key] = value
    else out[key] = validatorOf(value)
  }
  return out
}

/** A pattern must at least be a regular expression of bounded length, so every consumer can read it. */
function checkedPattern(value: unknown, field: string): string {
  if (typeof value !== 'string') throw invalid(field, 'must be a string')
  if (value.length > schemaLimits.patternChars) {
    throw invalid(field, `is longer than ${schemaLimits.patternChars} characters`)
  }
  try {
    new RegExp(value, 'u')
  } catch (error) {
    throw invalid(field, `is not a valid regular expression (${(error as Error).message})`)
  }
  return value
}

function isObject(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function invalid(field: string, problem: string): ToolError {
  return new ToolError('validation', `${field} ${problem}.`, {
    hint: 'Declare input_schema and output_schema as JSON Schema objects with local $refs, within the documented size (docs/sources.md).',
    details: { field },
  })
}
