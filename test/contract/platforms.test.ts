import { describe, expect, it } from 'vitest'
import { builtinEntry, listingOf, type ToolListing } from '../../src/catalog/entry'
import type { JsonSchema } from '../../src/core/json-schema'
import { formatCatalog } from '../../src/platforms/formats'
import type { McpTool } from '../../src/platforms/mcp'
import type { OpenAiTool } from '../../src/platforms/openai'
import { allTools } from '../../src/tools/builtins'
import { compiler, hasFreeFormMap, walk } from '../support/schemas'

// The whole catalog, whoever added the tool: every one must pass each platform's rules.
const entries = allTools.map((tool) => listingOf(builtinEntry(tool)))
const byName = new Map(entries.map((entry) => [entry.name, entry]))

describe('tool names', () => {
  it('fit every platform: ^[A-Za-z_][A-Za-z0-9_-]{0,63}$, unique', () => {
    for (const entry of entries) expect(entry.name).toMatch(/^[A-Za-z_][A-Za-z0-9_-]{0,63}$/)
    expect(new Set(entries.map((entry) => entry.name)).size).toBe(entries.length)
  })
})

describe('OpenAI function tools (strict mode)', () => {
  const tools = formatCatalog('openai', entries) as OpenAiTool[]
  const openAiKeywords = new Set(
    'type description enum const anyOf $ref $defs properties required additionalProperties items minItems maxItems pattern format minimum maximum exclusiveMinimum exclusiveMaximum multipleOf'.split(
      ' ',
    ),
  )

  it('compile, and are strict unless the input holds a shape strict mode cannot express', () => {
    const ajv = compiler('2020')
    for (const tool of tools) {
      expect(tool.type).toBe('function')
      expect(ajv.compile(tool.function.parameters)).toBeTypeOf('function')
      const original = byName.get(tool.function.name) as ToolListing
      if (!tool.function.strict) expect(hasFreeFormMap(original.input_schema), tool.function.name).toBe(true)
      expect(tool.function.parameters.$schema).toBeUndefined()
    }
    const strictNames = tools.filter((tool) => tool.function.strict).map((tool) => tool.function.name)
    expect(strictNames).toEqual(
      expect.arrayContaining(['read_file', 'write_file', 'multi_edit', 'list_files', 'execute_command']),
    )
  })

  it('follow the strict-mode rules: closed objects, every property required, optional ones nullable, known keywords only', () => {
    const ajv = compiler('2020')
    let properties = 0
    for (const tool of tools.filter((candidate) => candidate.function.strict)) {
      const { name, parameters } = tool.function
      expect(parameters.type, name).toBe('object')
      expect(parameters.anyOf, name).toBeUndefined()
      walk(parameters, (node, depth) => {
        expect(depth, name).toBeLessThanOrEqual(10)
        for (const key of Object.keys(node)) expect(openAiKeywords.has(key), `${name}: keyword ${key}`).toBe(true)
        if (node.type === 'object' || node.properties) {
          expect(node.additionalProperties, name).toBe(false)
          expect(node.required, name).toEqual(Object.keys(node.properties as object))
          properties += Object.keys(node.properties as object).length
        }
        if (Array.isArray(node.enum) && Array.isArray(node.type) && node.type.includes('null')) {
          expect(node.enum, name).toContain(null)
        }
      })
      const original = byName.get(name) as ToolListing
      const required = new Set(original.input_schema.required as string[] | undefined)
      for (const [key, property] of Object.entries(parameters.properties as Record<string, JsonSchema>)) {
        const nullable = ajv.compile(property)(null)
        expect(nullable, `${name}.${key}`).toBe(!required.has(key))
      }
    }
    expect(properties).toBeLessThanOrEqual(5000)
  })
})

describe('Anthropic tools', () => {
  it('have name, description and an object input_schema that compiles', () => {
    const ajv = compiler('2020')
    for (const tool of formatCatalog('anthropic', entries) as Array<Record<string, JsonSchema>>) {
      expect(Object.keys(tool).sort()).toEqual(['description', 'input_schema', 'name'])
      expect(tool.input_schema?.type).toBe('object')
      expect(tool.input_schema?.$schema).toBeUndefined()
      expect(ajv.compile(tool.input_schema as JsonSchema)).toBeTypeOf('function')
    }
  })
})

describe('Gemini function declarations', () => {
  const allowed = new Set(
    'type format description nullable enum properties required items minItems maxItems minimum maximum minLength maxLength pattern anyOf'.split(
      ' ',
    ),
  )

  it('use only the OpenAPI 3.0 subset Gemini accepts, and compile as draft-07 with nullable', () => {
    const ajv = compiler('07')
    for (const declaration of formatCatalog('gemini', entries) as Array<{ name: string; parameters?: JsonSchema }>) {
      const { name, parameters } = declaration
      if (!parameters) continue
      expect(parameters.type, name).toBe('object')
      walk(parameters, (node) => {
        for (const key of Object.keys(node)) expect(allowed.has(key), `${name}: keyword ${key}`).toBe(true)
        if (node.type !== undefined) expect(typeof node.type, name).toBe('string')
        if (node.enum) expect(node.type, name).toBe('string')
        if (node.properties) expect(Object.keys(node.properties).length, name).toBeGreaterThan(0)
      })
      expect(ajv.compile(parameters)).toBeTypeOf('function')
    }
  })
})

describe('MCP tools', () => {
  it('carry title, object input and output schemas that compile, and annotations from the effect and hints', () => {
    const ajv = compiler('2020')
    for (const tool of formatCatalog('mcp', entries) as McpTool[]) {
      const entry = byName.get(tool.name) as ToolListing
      expect(tool.title).toBe(entry.title)
      expect(tool.inputSchema.type).toBe('object')
      expect(tool.outputSchema.type).toBe('object')
      ajv.compile(tool.inputSchema)
      ajv.compile(tool.outputSchema)
      const { readOnlyHint, destructiveHint, idempotentHint, openWorldHint } = tool.annotations
      expect(readOnlyHint, tool.name).toBe(entry.effect === 'read')
      // External tools reach the world, and so do the reads of the public web (reference 002).
      const webRead = tool.name === 'web_fetch' || tool.name === 'web_search'
      expect(openWorldHint, tool.name).toBe(entry.effect === 'external' || webRead)
      // Read tools never destroy; every write or destructive tool may overwrite or delete unless it says otherwise.
      expect(destructiveHint, tool.name).toBe(entry.effect !== 'read' && entry.hints.destructive)
      if (entry.effect === 'write' || entry.effect === 'destructive') expect(destructiveHint, tool.name).toBe(true)
      expect(idempotentHint, tool.name).toBe(entry.hints.idempotent)
      if (entry.effect === 'read') expect(idempotentHint, tool.name).toBe(true)
    }
  })
})
