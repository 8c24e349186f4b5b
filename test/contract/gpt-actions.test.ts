import { readFile } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { builtinEntries } from '../../src/catalog/builtins'
import { allTools } from '../../src/tools/builtins'
import { startTestServer, type TestServer } from '../support/server'

// biome-ignore lint/suspicious/noExplicitAny: walking an arbitrary JSON document
type Json = any

const effects = new Map(allTools.map((tool) => [tool.name, tool.effect]))

/** The limits a custom GPT's action importer enforces (OpenAI's GPT Actions documentation). */
function expectImportableByGpt(document: Json) {
  expect(document.openapi).toMatch(/^3\.1\./)
  expect(document.servers).toHaveLength(1)
  expect(document.servers[0].url).toMatch(/^https?:\/\/[^/]+/)
  const schemes = Object.values(document.components.securitySchemes) as Json[]
  expect(schemes).toEqual([expect.objectContaining({ type: 'http', scheme: 'bearer' })])
  const operations = Object.values(document.paths).flatMap((item: Json) => Object.values(item)) as Json[]
  expect(operations.length).toBeGreaterThan(0)
  for (const operation of operations) {
    const name = operation.operationId
    expect(name).toMatch(/^[A-Za-z_][A-Za-z0-9_-]{0,63}$/)
    expect(operation.summary?.length, name).toBeGreaterThan(0)
    expect(operation.description?.length, name).toBeGreaterThan(0)
    expect(operation.description.length, name).toBeLessThanOrEqual(300)
    // Without the flag a GPT asks before every non-GET call; tools say exactly which ones need asking.
    if (effects.has(name)) expect(operation['x-openai-isConsequential'], name).toBe(effects.get(name) !== 'read')
    for (const parameter of operation.parameters ?? []) {
      const resolved = parameter.$ref ? document.components.parameters[parameter.$ref.split('/').at(-1)] : parameter
      expect(resolved.in, `${name}: ${resolved.name}`).not.toBe('header')
      expect((resolved.description ?? '').length, `${name}: ${resolved.name}`).toBeLessThanOrEqual(700)
    }
    // A tool that hands back files names them the way a GPT attaches them to the conversation.
    const output = operation.responses['200']?.content?.['application/json']?.schema
    if (output?.properties?.files) expect(output.properties.openaiFileResponse?.type, name).toBe('array')
  }
}

describe('the committed openapi/openapi.json', () => {
  it('imports into a custom GPT', async () => {
    const committed = JSON.parse(await readFile(new URL('../../openapi/openapi.json', import.meta.url), 'utf8'))
    expectImportableByGpt(committed)
    for (const tool of builtinEntries(allTools).filter((candidate) => !candidate.describedBy))
      expect(committed.paths[`/v1/tools/${tool.name}`]?.post, tool.name).toBeDefined()
  })
})

describe('GET /openapi.json', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ TOOLPORT_PUBLIC_URL: 'https://tools.example.com' })
  })
  afterAll(async () => {
    await server.stop()
  })

  it('serves the whole document, importable by a GPT, with the public URL as its server', async () => {
    const document = await fetch(`${server.url}/openapi.json`).then((response) => response.json())
    expectImportableByGpt(document)
    expect(document.servers).toEqual([{ url: 'https://tools.example.com' }])
  })

  it('?tools=a,b serves only those operations, still importable', async () => {
    const response = await fetch(`${server.url}/openapi.json?tools=read_file,%20list_files`)
    expect(response.status).toBe(200)
    const document = await response.json()
    // get_job stays in every subset: a GPT needs it to collect a long call turned into a job.
    expect(Object.keys(document.paths).sort()).toEqual(['/v1/jobs/{id}', '/v1/tools/list_files', '/v1/tools/read_file'])
    expectImportableByGpt(document)
  })

  it('refuses unknown or missing tool names with a validation problem naming them', async () => {
    for (const query of ['tools=read_file,nope', 'tools=', 'tools=,']) {
      const response = await fetch(`${server.url}/openapi.json?${query}`)
      expect(response.status, query).toBe(400)
      expect(response.headers.get('content-type')).toBe('application/problem+json')
      const problem = await response.json()
      expect(problem).toMatchObject({ code: 'validation', field: 'tools' })
      if (query.includes('nope')) expect(problem.detail).toContain('nope')
    }
  })
})
