import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openApiLintErrors } from '../support/openapi-lint'
import { startTestServer, type TestServer } from '../support/server'
import { startSourceUpstreams } from '../support/source-upstreams'
import { putSource } from '../support/sources-api'

const adminKey = 'pets-admin-key-0123456789'

let server: TestServer
let upstream: Awaited<ReturnType<typeof startSourceUpstreams>>

beforeAll(async () => {
  upstream = await startSourceUpstreams()
  server = await startTestServer(
    { TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${upstream.port}` },
    { fileKeys: [{ tenant: 'zoo', key: adminKey, admin: true }] },
  )
})
afterAll(async () => {
  await server?.stop()
  await upstream?.stop()
})

const put = (manifest: Record<string, unknown>) => putSource(server, adminKey, manifest)

const call = (tool: string, input: unknown) => server.call(tool, input, { key: adminKey })

describe('an openapi source', () => {
  it('makes each operation of a YAML document a tool, with effects by method', async () => {
    const registered = await put({ id: 'pets', kind: 'openapi', url: `${upstream.url}/openapi.yaml` })
    expect(registered.status).toBe(201)
    expect(registered.body).toMatchObject({ status: 'ready', tools: ['listPets', 'createPet', 'getPet', 'deletePet'] })
    const catalog = await (
      await fetch(`${server.url}/v1/tools`, { headers: { authorization: `Bearer ${adminKey}` } })
    ).json()
    const byName = new Map(catalog.tools.map((tool: { name: string }) => [tool.name, tool]))
    expect(byName.get('listPets')).toMatchObject({ id: 'pets:listPets', effect: 'read', title: 'List pets' })
    expect(byName.get('createPet')).toMatchObject({
      effect: 'write',
      input_schema: { properties: { name: { type: 'string', minLength: 1 } }, required: ['name'] },
    })
    expect(byName.get('deletePet')).toMatchObject({ effect: 'destructive' })
    // A path parameter is a required input field; an array result is { result: [...] }.
    expect(byName.get('getPet')).toMatchObject({ input_schema: { required: ['petId'] } })
  })

  it('sends path, query and body parameters where the document puts them', async () => {
    const listed = await call('listPets', { limit: 1 })
    expect(listed.body).toEqual({ result: [{ id: 1, name: 'Rex' }] })
    expect(upstream.hits.at(-1)).toMatchObject({ method: 'GET', url: '/api/pets?limit=1' })
    const created = await call('createPet', { name: 'Kit' })
    expect(created.body).toEqual({ id: 3, name: 'Kit' })
    expect(upstream.hits.at(-1)).toMatchObject({ method: 'POST', url: '/api/pets', body: '{"name":"Kit"}' })
    const got = await call('getPet', { petId: 3 })
    expect(got.body).toEqual({ id: 3, name: 'Kit' })
    const missing = await call('getPet', { petId: 9 })
    expect(missing.status).toBe(502)
    expect(missing.body.detail).toContain('HTTP 404')
    const invalid = await call('createPet', { name: '' })
    expect(invalid.status).toBe(400)
    expect(invalid.body.field).toBe('name')
  })

  it('shows the resolved request in a dry run without sending it', async () => {
    const before = upstream.hits.length
    const dry = await fetch(`${server.url}/v1/tools/deletePet?dry_run=true`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ petId: 2 }),
    })
    expect(await dry.json()).toMatchObject({
      dry_run: true,
      preview: { request: { method: 'DELETE', url: `${upstream.url}/api/pets/2` }, address: { allowed: true } },
    })
    expect(upstream.hits.length).toBe(before)
    expect(upstream.pets.has(2)).toBe(true)
  })

  it('takes an inline document with an operation filter and effect overrides, and its /openapi.json lints clean', async () => {
    const document = await (await fetch(`${upstream.url}/openapi.json`)).json()
    const registered = await put({
      id: 'pets-ro',
      kind: 'openapi',
      document: { ...document, servers: [{ url: `${upstream.url}/api` }] },
      operations: ['listPets', 'getPet'],
      effects: { getPet: 'external' },
    })
    // The same operation names as the other source: its tools clash, so it is refused, naming both.
    expect(registered.status).toBe(409)
    expect(registered.body.detail).toContain('listPets')
    const renamed = await put({
      id: 'pets-ro',
      kind: 'openapi',
      document: { ...document, paths: { '/pets/{petId}': document.paths['/pets/{petId}'] } },
      base_url: `${upstream.url}/api`,
      operations: ['getPet'],
    })
    expect(renamed.status).toBe(409)
    const openapi = await (
      await fetch(`${server.url}/openapi.json`, { headers: { authorization: `Bearer ${adminKey}` } })
    ).json()
    expect(openapi.paths['/v1/tools/createPet'].post['x-effect']).toBe('write')
    // The Pet schema a source tool refers to is a component of the document, under the tool's name.
    expect(Object.keys(openapi.components.schemas)).toEqual(expect.arrayContaining(['getPet_output_Pet']))
    expect(await openApiLintErrors(openapi)).toBeUndefined()
  }, 120_000)

  it('is in error, with the reason, when the document cannot be used', async () => {
    const notOpenApi = await put({ id: 'bad-doc', kind: 'openapi', url: `${upstream.url}/json/echo` })
    expect(notOpenApi.body.status).toBe('error')
    const swagger = await put({ id: 'swagger', kind: 'openapi', document: { swagger: '2.0', paths: {} } })
    expect(swagger.body).toMatchObject({ status: 'error' })
    expect(swagger.body.reason).toContain('not OpenAPI 3.0 or 3.1')
    const both = await put({ id: 'both', kind: 'openapi', url: `${upstream.url}/openapi.json`, document: {} })
    expect(both.status).toBe(400)
    // The rest of the catalog is unaffected.
    expect((await call('listPets', {})).status).toBe(200)
  })
})
