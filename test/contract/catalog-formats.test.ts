import { toStrictJsonSchema } from 'openai/lib/transform'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { builtinEntry, listingOf, type ToolListing } from '../../src/catalog/entry'
import type { JsonSchema } from '../../src/core/json-schema'
import { formatCatalog, isCatalogFormat } from '../../src/platforms/formats'
import type { OpenAiTool } from '../../src/platforms/openai'
import { allTools } from '../../src/tools/builtins'
import { compiler } from '../support/schemas'
import { startTestServer, type TestServer } from '../support/server'

const entries = allTools.map((tool) => listingOf(builtinEntry(tool)))
const byName = new Map(entries.map((entry) => [entry.name, entry]))

describe('GET /v1/tools?format=', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer()
  })
  afterAll(async () => {
    await server.stop()
  })

  it('serves every format with the same revision, and refuses an unknown one', async () => {
    const revisions = new Set<string>()
    for (const format of ['', 'openai', 'anthropic', 'gemini', 'mcp']) {
      const response = await fetch(`${server.url}/v1/tools${format ? `?format=${format}` : ''}`)
      expect(response.status).toBe(200)
      const body = await response.json()
      expect(body.tools).toEqual(formatCatalog(isCatalogFormat(format) ? format : 'toolport', entries))
      revisions.add(body.revision)
    }
    expect(revisions.size).toBe(1)
    const unknown = await fetch(`${server.url}/v1/tools?format=xml`)
    expect(unknown.status).toBe(400)
    expect(await unknown.json()).toMatchObject({ code: 'validation', field: 'format' })
  })

  it('offers every tool to OpenAI in strict mode, as the openai package would make it strict unchanged', async () => {
    const { tools } = await (await fetch(`${server.url}/v1/tools?format=openai`)).json()
    expect(tools.length).toBe(entries.length)
    for (const tool of tools as OpenAiTool[]) {
      expect(tool.function.strict, tool.function.name).toBe(true)
      expect(toStrictJsonSchema(tool.function.parameters as never), tool.function.name).toEqual(
        tool.function.parameters,
      )
    }
  })

  it('round-trips: the strict-mode payload with every optional field null is accepted by the tool endpoint', async () => {
    const root = 'tenants/default/workspaces/roundtrip'
    for (const file of ['r.txt', 'e.txt', 'm.txt', 'v.txt', 'd.txt'])
      await server.storage.put(`${root}/${file}`, 'alpha beta\n')
    await server.storage.put(`${root}/data.csv`, 'a,b\n1,2\n')
    const fixtures: Record<string, Record<string, unknown>> = {
      read_file: { path: 'r.txt' },
      write_file: { path: 'w.txt', content: 'hello' },
      apply_edit: { path: 'e.txt', old_text: 'alpha', new_text: 'A' },
      multi_edit: { path: 'm.txt', edits: [{ old_text: 'alpha', new_text: 'A' }] },
      revert_edit: { path: 'v.txt', old_text: 'alpha', new_text: 'A' },
      delete_file: { path: 'd.txt' },
      list_files: {},
      // Exactly one of url and html is required; html renders offline.
      screenshot: { html: '<p>round trip</p>', width: 200, height: 100 },
      // Exactly one of path and openaiFileIdRefs is required.
      excel_analyze: { path: 'data.csv' },
    }
    // Values the generic sample cannot make (a pattern): the call may fail, but not on a null.
    const samples: Record<string, Record<string, unknown>> = {
      get_job: { job_id: 'no-such-job-0000' },
      cancel_job: { job_id: 'no-such-job-0000' },
    }
    const ajv = compiler('2020')
    for (const tool of (formatCatalog('openai', entries) as OpenAiTool[]).filter((tool) => tool.function.strict)) {
      const { name, parameters } = tool.function
      const entry = byName.get(name) as ToolListing
      const payload = { ...nulledPayload(entry.input_schema), ...samples[name], ...fixtures[name] }
      const validate = ajv.compile(parameters)
      expect(validate(payload), `${name}: ${JSON.stringify(validate.errors)}`).toBe(true)
      const result = await server.call(name, payload, { workspace: 'roundtrip' })
      if (name in fixtures) expect(result.status, `${name}: ${JSON.stringify(result.body)}`).toBe(200)
      // Tools without a fixture may fail on a sample value, but never on a null the platform sent.
      const nulled = Object.keys(payload).filter((key) => payload[key] === null)
      if (result.body?.code === 'validation') expect(nulled, name).not.toContain(result.body.field)
    }
    expect((await server.call('read_file', { path: 'w.txt' }, { workspace: 'roundtrip' })).body.content).toBe('hello')
  })
})

/** What a strict-mode model sends when it uses only the required fields: null for every optional one. */
function nulledPayload(schema: JsonSchema): Record<string, unknown> {
  const required = new Set(schema.required as string[] | undefined)
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>
  return Object.fromEntries(
    Object.entries(properties).map(([key, property]) => [key, required.has(key) ? sample(property) : null]),
  )
}

function sample(schema: JsonSchema): unknown {
  if (Array.isArray(schema.enum)) return schema.enum[0]
  if (schema.const !== undefined) return schema.const
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type
  switch (type) {
    case 'object':
      return nulledPayload(schema)
    case 'array':
      return [sample((schema.items ?? {}) as JsonSchema)]
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 1
    case 'boolean':
      return false
    default:
      return schema.format === 'uri' ? 'https://example.com/' : 'sample'
  }
}
