import { describe, expect, it } from 'vitest'
import { compileSchema } from './schema-compiler'

const compile = (schema: unknown) => () => compileSchema(schema, 'input_schema', { root: 'object' })

describe('the expanded size of a declared schema', () => {
  it('accepts a recursive tree used twice, and a JSON value recursing by type', () => {
    const tree = { type: 'object', properties: { kids: { type: 'array', items: { $ref: '#/$defs/tree' } } } }
    expect(
      compile({
        type: 'object',
        $defs: { tree },
        properties: { a: { $ref: '#/$defs/tree' }, b: { $ref: '#/$defs/tree' } },
      }),
    ).not.toThrow()
    const json = {
      anyOf: [
        { type: 'string' },
        { type: 'number' },
        { type: 'array', items: { $ref: '#/$defs/json' } },
        { type: 'object', additionalProperties: { $ref: '#/$defs/json' } },
      ],
    }
    expect(compile({ type: 'object', $defs: { json }, properties: { v: { $ref: '#/$defs/json' } } })).not.toThrow()
  })

  it('refuses a recursion that reaches itself twice for the same part of the value', () => {
    const doubling = {
      type: 'object',
      anyOf: [{ properties: { c: { $ref: '#/$defs/node' } } }, { properties: { c: { $ref: '#/$defs/node' } } }],
    }
    expect(compile({ type: 'object', $defs: { node: doubling }, allOf: [{ $ref: '#/$defs/node' }] })).toThrow(
      /reaches itself more than once for the same part of a value \(\/properties:c\)/,
    )
    const both = {
      type: 'object',
      allOf: [{ properties: { c: { $ref: '#/$defs/node' } } }, { properties: { c: { $ref: '#/$defs/node' } } }],
    }
    expect(compile({ type: 'object', $defs: { node: both }, properties: { root: { $ref: '#/$defs/node' } } })).toThrow(
      /doubles with every level/,
    )
  })

  it('refuses a fan-out over the same definition, naming the definition where it grows', () => {
    const defs: Record<string, unknown> = { l30: { type: 'string' } }
    for (let level = 0; level < 30; level++)
      defs[`l${level}`] = { anyOf: [{ $ref: `#/$defs/l${level + 1}` }, { $ref: `#/$defs/l${level + 1}` }] }
    expect(compile({ type: 'object', $defs: defs, properties: { v: { $ref: '#/$defs/l0' } } })).toThrow(
      /^input_schema\.\$defs\.l\d+ grows to more than 50000 schema nodes/,
    )
  })
})

describe('keywords the meta-schema fixes', () => {
  it.each([
    [
      { type: 'object', properties: { a: { type: 'string', minLength: 'x' } } },
      'properties.a.minLength',
      'non-negative integer',
    ],
    [
      { type: 'object', properties: { a: { type: 'number', maximum: '10' } } },
      'properties.a.maximum',
      'must be a number',
    ],
    [{ type: 'object', properties: { a: { type: 'strnig' } } }, 'properties.a.type', 'must be one of'],
    [{ type: 'object', required: 'a' }, 'required', 'list of property names'],
    [{ type: 'object', properties: { a: { enum: 'x' } } }, 'properties.a.enum', 'list of values'],
    [
      { type: 'object', properties: { a: { type: 'number', multipleOf: 0 } } },
      'properties.a.multipleOf',
      'greater than 0',
    ],
  ])('refuses %j naming %s', (schema, where, message) => {
    expect(compile(schema)).toThrow(new RegExp(`^input_schema\\.${where.replaceAll('.', '\\.')} .*${message}`))
  })

  it("accepts OpenAPI 3.0's boolean exclusiveMinimum and a list of types", () => {
    expect(
      compile({
        type: 'object',
        properties: { a: { type: 'number', minimum: 0, exclusiveMinimum: true }, b: { type: ['string', 'null'] } },
      }),
    ).not.toThrow()
  })
})
