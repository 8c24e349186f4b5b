import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestServer } from '../support/server'

// GET /openapi.json writes the document as text from per-variant templates (openApiDocumentText); a
// ?tools= subset is cut from the document as objects (buildOpenApiDocument). Both must say the same, for
// tools whose texts and schemas hold what could be taken for the text path's placeholders and markers.

const key = 'doc-text-admin-key-0123456789'
let server: TestServer

beforeAll(async () => {
  server = await startTestServer(
    { TOOLPORT_FETCH_ALLOW_HOSTS: '127.0.0.1:9' },
    { fileKeys: [{ tenant: 'acme', key, admin: true }] },
  )
})
afterAll(async () => {
  await server?.stop()
})

const tricky = [
  'quotes " and \\ backslashes, a newline\nand a tab\t',
  'what a marker or placeholder looks like as text: "\\u00020" and \\u0001x:name',
  'astral 𝄞 and lone surrogate-free unicode é ü 中文',
]

function manifest() {
  return {
    id: 'texty',
    kind: 'http',
    protocol: 'jsonrpc',
    url: 'http://127.0.0.1:9/rpc',
    tools: [
      {
        name: 'texty_read',
        method: 'a',
        effect: 'read',
        description: tricky[0],
        // Control characters a description may not hold, a schema's values may: the markers' own.
        input_schema: { type: 'object', properties: { q: { type: 'string', enum: ['\u00020', '\u0001'] } } },
      },
      {
        name: 'texty_write',
        method: 'b',
        effect: 'write',
        description: tricky[1],
        input_schema: {
          type: 'object',
          $defs: { node: { type: 'object', properties: { next: { $ref: '#/$defs/node' } } } },
          properties: { head: { $ref: '#/$defs/node' }, self: { $ref: '#' } },
        },
      },
      {
        name: 'texty_gone',
        method: 'd',
        effect: 'destructive',
        description: 'Deletes.',
        input_schema: { type: 'object' },
      },
      { name: 'texty_out', method: 'e', effect: 'external', description: 'Sends.', input_schema: { type: 'object' } },
      { name: 'texty_third', method: 'c', effect: 'write', description: tricky[2], input_schema: { type: 'object' } },
    ],
  }
}

describe('the OpenAPI document as text', () => {
  it('is the same document as the one built as objects, whatever the tools hold', async () => {
    const headers = { authorization: `Bearer ${key}` }
    const put = await fetch(`${server.url}/v1/sources/texty`, {
      method: 'PUT',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(manifest()),
    })
    expect(put.status, await put.clone().text()).toBeLessThan(300)
    const response = await fetch(`${server.url}/openapi.json`, { headers })
    expect(response.headers.get('content-type')).toMatch(/^application\/json/)
    const full = JSON.parse(await response.text())
    const catalog = await (await fetch(`${server.url}/v1/tools`, { headers })).json()
    const names: string[] = catalog.tools.map((tool: { name: string }) => tool.name)
    expect(names).toEqual(expect.arrayContaining(['texty_read', 'texty_write', 'texty_third', 'read_file']))
    const subset = await (await fetch(`${server.url}/openapi.json?tools=${names.join(',')}`, { headers })).json()
    const { paths: subsetPaths, ...subsetRest } = subset
    const { paths: fullPaths, ...fullRest } = full
    expect(subsetRest).toEqual(fullRest)
    const toolPaths = Object.keys(fullPaths).filter((path) => path.startsWith('/v1/tools/'))
    expect(toolPaths.length).toBeGreaterThan(names.length / 2)
    expect(Object.keys(subsetPaths)).toEqual(expect.arrayContaining(toolPaths))
    for (const path of Object.keys(subsetPaths)) expect(subsetPaths[path], path).toEqual(fullPaths[path])
    const operation = full.paths['/v1/tools/texty_write'].post
    expect(operation.description).toBe(tricky[1])
    expect(operation.summary).toBe('texty_write')
    expect(full.paths['/v1/tools/texty_read'].post.description).toBe(tricky[0])
    expect(full.paths['/v1/tools/texty_third'].post.description).toBe(tricky[2])
    expect(full.paths['/v1/tools/texty_read'].post['x-openai-isConsequential']).toBe(false)
    const read = full.paths['/v1/tools/texty_read'].post.requestBody.content['application/json'].schema
    expect(read.properties.q.enum).toEqual(['\u00020', '\u0001'])
    expect(operation['x-openai-isConsequential']).toBe(true)
    // Every effect but read shares one template: each operation still names its own.
    for (const [name, effect] of [
      ['texty_read', 'read'],
      ['texty_write', 'write'],
      ['texty_gone', 'destructive'],
      ['texty_out', 'external'],
    ]) {
      expect(full.paths[`/v1/tools/${name}`].post['x-effect'], name).toBe(effect)
    }
    const input = operation.requestBody.content['application/json'].schema
    expect(input.properties.head).toEqual({ $ref: '#/components/schemas/texty_write_input_node' })
    expect(full.components.schemas.texty_write_input_node.properties.next).toEqual({
      $ref: '#/components/schemas/texty_write_input_node',
    })
    expect(full.components.schemas.texty_write_input).toBeDefined()
    // A second fetch is the same text (kept per catalog revision).
    expect(await (await fetch(`${server.url}/openapi.json`, { headers })).json()).toEqual(full)
  })
})
