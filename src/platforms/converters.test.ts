import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { builtinEntry, listingOf } from '../catalog/entry'
import type { JsonSchema } from '../core/json-schema'
import { defineTool } from '../tools/tool'
import { toGeminiDeclaration } from './gemini'
import { toOpenAiTool } from './openai'

const synthetic = (input: z.ZodObject) =>
  listingOf(
    builtinEntry(
      defineTool({
        name: 'synthetic',
        title: 'Synthetic',
        description: 'A tool made up for this test.',
        effect: 'read',
        input,
        output: z.object({}),
        run: async () => ({}),
      }),
    ),
  )

describe('toOpenAiTool', () => {
  it('keeps $ref/$defs, makes optional references nullable, and falls back to non-strict for free-form maps', () => {
    const Node = z.object({ label: z.string().optional() }).meta({ id: 'Node' })
    const converted = toOpenAiTool(
      synthetic(z.object({ node: Node.optional(), mode: z.enum(['a', 'b']).default('a') })),
    )
    expect(converted.function.strict).toBe(true)
    const { properties, $defs } = converted.function.parameters as Record<string, Record<string, JsonSchema>>
    expect(properties?.node).toEqual({ anyOf: [{ $ref: '#/$defs/Node' }, { type: 'null' }] })
    expect(properties?.mode).toEqual({ type: ['string', 'null'], enum: ['a', 'b', null] })
    expect($defs?.Node).toEqual({
      type: 'object',
      properties: { label: { type: ['string', 'null'] } },
      required: ['label'],
      additionalProperties: false,
    })
    const loose = toOpenAiTool(synthetic(z.object({ headers: z.record(z.string(), z.string()) })))
    expect(loose.function.strict).toBe(false)
  })
})

describe('toGeminiDeclaration', () => {
  it('rewrites what the subset lacks: nullable instead of null unions, inlined $ref, inclusive bounds', () => {
    const Node = z.object({ label: z.string() }).meta({ id: 'Node' })
    const entry = synthetic(
      z.object({
        code: z.number().int().nullable(),
        kind: z.literal('a'),
        ratio: z.number().gt(0).lt(1).optional(),
        node: Node,
        nodes: z.array(Node).optional(),
        choice: z.union([z.string(), z.number()]).nullable(),
      }),
    )
    const { parameters } = toGeminiDeclaration(entry)
    const properties = parameters?.properties as Record<string, JsonSchema>
    expect(properties.code).toEqual({
      type: 'integer',
      minimum: expect.any(Number),
      maximum: expect.any(Number),
      nullable: true,
    })
    expect(properties.kind).toEqual({ type: 'string', enum: ['a'], format: 'enum' })
    expect(properties.ratio).toEqual({ type: 'number', minimum: 0, maximum: 1 })
    expect(properties.node).toMatchObject({ type: 'object', properties: { label: { type: 'string' } } })
    expect(properties.choice).toEqual({
      anyOf: [
        { type: 'string', nullable: true },
        { type: 'number', nullable: true },
      ],
    })
    expect(parameters?.required).toEqual(['code', 'kind', 'node', 'choice'])
    expect(JSON.stringify(parameters)).not.toMatch(/\$ref|\$defs|additionalProperties|const/)
    const noInputs = toGeminiDeclaration({ ...entry, input_schema: { type: 'object', properties: {} } })
    expect(noInputs.parameters).toBeUndefined()
  })
})
