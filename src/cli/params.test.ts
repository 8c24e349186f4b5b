import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { JsonSchema } from '../core/json-schema'
import { parseArgs, UsageError } from './args'
import { inputFromOptions } from './params'

const schema = z.toJSONSchema(
  z.object({
    path: z.string(),
    start_line: z.number().int().optional(),
    recursive: z.boolean().default(false),
    tags: z.array(z.string()).optional(),
    edits: z.array(z.object({ old_text: z.string(), new_text: z.string() })).optional(),
    headers: z.record(z.string(), z.string()).optional(),
  }),
  { io: 'input' },
) as JsonSchema

const reserved = new Set(['url', 'out'])
const input = (argv: string[]) => inputFromOptions(schema, parseArgs(argv).options, reserved)

describe('parseArgs', () => {
  it('splits positionals, --name value, --name=value and bare flags; -- ends the options', () => {
    const parsed = parseArgs(['call', 'read_file', '--path', 'a b.txt', '--start-line=3', '--recursive', '--', '--x'])
    expect(parsed.positionals).toEqual(['call', 'read_file', '--x'])
    expect(Object.fromEntries(parsed.options)).toEqual({
      path: ['a b.txt'],
      'start-line': ['3'],
      recursive: [true],
    })
  })
})

describe('inputFromOptions', () => {
  it('types each parameter by the schema, with - and _ alike', () => {
    expect(input(['--path', 'a.txt', '--start-line', '3', '--recursive', '--url', 'http://x'])).toEqual({
      path: 'a.txt',
      start_line: 3,
      recursive: true,
    })
    expect(input(['--recursive=false'])).toEqual({ recursive: false })
  })

  it('collects repeated scalars into arrays, and reads arrays of objects and maps as JSON', () => {
    expect(input(['--tags', 'a', '--tags', 'b'])).toEqual({ tags: ['a', 'b'] })
    expect(input(['--tags', '["x","y"]'])).toEqual({ tags: ['x', 'y'] })
    expect(input(['--edits', '[{"old_text":"a","new_text":"b"}]'])).toEqual({
      edits: [{ old_text: 'a', new_text: 'b' }],
    })
    expect(input(['--headers', '{"accept":"text/html"}'])).toEqual({ headers: { accept: 'text/html' } })
  })

  it('refuses unknown parameters, bad numbers, bad booleans and bad JSON with a usage error', () => {
    expect(() => input(['--nope', '1'])).toThrow(/Unknown parameter --nope.*--path/)
    expect(() => input(['--start-line', 'three'])).toThrow(UsageError)
    expect(() => input(['--recursive', 'maybe'])).toThrow(/true or false/)
    expect(() => input(['--edits', '[{'])).toThrow(/not valid JSON/)
    expect(() => input(['--path'])).toThrow(/needs a value/)
  })

  it('never sets a prototype through a parameter named __proto__', () => {
    const withProto = inputFromOptions(
      JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}}}') as JsonSchema,
      parseArgs(['--__proto__', 'x']).options,
      reserved,
    )
    expect(Object.getPrototypeOf(withProto)).toBe(Object.prototype)
    expect(Object.hasOwn(withProto, '__proto__')).toBe(true)
  })
})
