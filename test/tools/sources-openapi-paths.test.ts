import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type LocalWeb, startLocalWeb } from '../support/local-web'
import { startTestServer, type TestServer } from '../support/server'
import { putSource } from '../support/sources-api'

// OpenAPI path parameters are one segment of their template, whatever a model puts in them: "." and
// ".." would move the call (with the source's credentials and the operation's effect) to another path.

const adminKey = 'paths-admin-key-0123456789ab'
let server: TestServer
let upstream: LocalWeb

const ok = (response: import('node:http').ServerResponse) => {
  response.writeHead(200, { 'content-type': 'application/json' })
  response.end('{"ok":true}')
}

beforeAll(async () => {
  // Every path answers: the test reads which ones were hit.
  upstream = await startLocalWeb(new Proxy({}, { get: () => (_request: unknown, response: never) => ok(response) }))
  server = await startTestServer(
    { TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${upstream.port}` },
    { fileKeys: [{ tenant: 'acme', key: adminKey, admin: true }] },
  )
  const operation = (operationId: string, parameters: string[]) => ({
    operationId,
    summary: operationId,
    parameters: parameters.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
    responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } } },
  })
  const put = await putSource(server, adminKey, {
    id: 'api',
    kind: 'openapi',
    document: {
      openapi: '3.1.0',
      info: { title: 'API', version: '1' },
      servers: [{ url: `${upstream.url}/v2` }],
      paths: {
        '/items/{id}/details': { get: operation('itemDetails', ['id']) },
        '/orgs/{org}/users/{user}': { delete: operation('removeUser', ['org', 'user']) },
      },
    },
  })
  expect(put.status, JSON.stringify(put.body)).toBe(201)
})
afterAll(async () => {
  await server?.stop()
  await upstream?.stop()
})

describe('OpenAPI path parameters', () => {
  it.each([
    ['itemDetails', { id: '..' }],
    ['itemDetails', { id: '.' }],
    ['itemDetails', { id: '' }],
    ['removeUser', { org: '..', user: '..' }],
    ['removeUser', { org: 'acme', user: '..' }],
  ])('%s with %j is refused before anything is sent', async (tool, input) => {
    const before = upstream.hits.length
    const answer = await server.call(tool, input, { key: adminKey })
    expect(answer.status, JSON.stringify(answer.body)).toBe(400)
    expect(answer.body.detail).toMatch(/path parameter \w+ of \w+ cannot be/)
    expect(upstream.hits.length).toBe(before)
  })

  it('keeps a slash, a dot inside a value and an encoded dot-dot in their one segment', async () => {
    for (const id of ['a/b', 'v1.2', '%2e%2e', '...']) {
      const answer = await server.call('itemDetails', { id }, { key: adminKey })
      expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    }
    expect(upstream.hits.slice(-4).map((hit) => hit.url)).toEqual([
      '/v2/items/a%2Fb/details',
      '/v2/items/v1.2/details',
      '/v2/items/%252e%252e/details',
      '/v2/items/.../details',
    ])
  })
})
