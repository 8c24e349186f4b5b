import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { JsonSchema } from '../core/json-schema'
import { stripNullOptionals } from './nulls'

const schemaOf = (type: z.ZodType) => z.toJSONSchema(type, { io: 'input', unrepresentable: 'any' }) as JsonSchema

describe('stripNullOptionals', () => {
  const Input = z.object({
    path: z.string(),
    limit: z.number().int().default(10),
    glob: z.string().optional(),
    exit_code: z.number().int().nullable().optional(),
    anything: z.any().optional(),
    nested: z.object({ name: z.string(), note: z.string().optional() }).optional(),
    items: z.array(z.object({ text: z.string(), tag: z.string().optional() })).optional(),
  })
  const schema = schemaOf(Input)

  it('drops nulls of optional fields at any depth, so defaults apply', () => {
    const value = stripNullOptionals(
      {
        path: 'a',
        limit: null,
        glob: null,
        nested: { name: 'n', note: null },
        items: [{ text: 't', tag: null }, { text: 'u' }],
      },
      schema,
    )
    expect(value).toEqual({ path: 'a', nested: { name: 'n' }, items: [{ text: 't' }, { text: 'u' }] })
    expect(Input.parse(value)).toMatchObject({ limit: 10 })
  })

  it('keeps nulls a field legitimately accepts, and nulls of required fields for validation to name', () => {
    const value = stripNullOptionals({ path: null, exit_code: null, anything: null, nested: null }, schema)
    expect(value).toEqual({ path: null, exit_code: null, anything: null })
    const result = Input.safeParse(value)
    expect(result.success).toBe(false)
    expect(result.error?.issues[0]?.path).toEqual(['path'])
  })

  it('leaves unknown keys, non-objects and ambiguous unions alone', () => {
    expect(stripNullOptionals({ path: 'a', extra: null }, schema)).toEqual({ path: 'a', extra: null })
    expect(stripNullOptionals(null, schema)).toBeNull()
    expect(stripNullOptionals('text', schema)).toBe('text')
    const union = schemaOf(z.union([z.object({ a: z.string().optional() }), z.object({ b: z.string().optional() })]))
    expect(stripNullOptionals({ a: null }, union)).toEqual({ a: null })
    const single = schemaOf(z.union([z.object({ a: z.string().optional() }), z.string()]))
    expect(stripNullOptionals({ a: null }, single)).toEqual({})
  })

  it('follows $ref into $defs and stops on self-references', () => {
    const Node: z.ZodType = z.lazy(() => z.object({ label: z.string().optional(), child: Node.optional() }))
    const recursive = schemaOf(z.object({ root: Node }))
    const value = stripNullOptionals({ root: { label: null, child: { label: null, child: null } } }, recursive)
    expect(value).toEqual({ root: { child: {} } })
  })

  it('never touches the prototype through a "__proto__" key', () => {
    const value = JSON.parse('{"path":"a","__proto__":{"polluted":null}}')
    stripNullOptionals(value, schema)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(Object.hasOwn(value, '__proto__')).toBe(true)
  })
})
