import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type LocalWeb, startLocalWeb } from '../support/local-web'
import { startTestServer, type TestServer } from '../support/server'
import { putSource } from '../support/sources-api'

// A tenant's secret header must reach its own upstream and no one else: an upstream (or whoever took
// over its address) that redirects a call to another origin gets the call, never the secret.

const adminKey = 'redirect-admin-key-0123456789'
const secret = 'sk-live-0123456789-never-leaves'
let server: TestServer
let upstream: LocalWeb
let elsewhere: LocalWeb

const json = (response: import('node:http').ServerResponse, body: unknown) => {
  response.writeHead(200, { 'content-type': 'application/json' })
  response.end(JSON.stringify(body))
}
const redirect = (response: import('node:http').ServerResponse, status: number, location: string) => {
  response.writeHead(status, { location })
  response.end()
}

beforeAll(async () => {
  elsewhere = await startLocalWeb({
    '/rpc': (_request, response) => json(response, { ok: true }),
    '/api/items': (_request, response) => json(response, [{ id: 1 }]),
  })
  upstream = await startLocalWeb({
    '/rpc': (_request, response) => redirect(response, 307, `${elsewhere.url}/rpc`),
    '/same': (_request, response) => redirect(response, 307, `${upstream.url}/rpc-here`),
    '/rpc-here': (_request, response) => json(response, { ok: true }),
    '/api/items': (_request, response) => redirect(response, 302, `${elsewhere.url}/api/items`),
  })
  server = await startTestServer(
    { TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${upstream.port},127.0.0.1:${elsewhere.port}` },
    { fileKeys: [{ tenant: 'acme', key: adminKey, admin: true, secrets: { API_KEY: secret } }] },
  )
})
afterAll(async () => {
  await server?.stop()
  await upstream?.stop()
  await elsewhere?.stop()
})

const tool = (name: string, path?: string) => ({
  name,
  description: `The ${name} tool.`,
  effect: 'read',
  ...(path ? { path } : {}),
  input_schema: { type: 'object', properties: {} },
  output_schema: { type: 'object', properties: { ok: { type: 'boolean' } } },
})

const secretsSeen = (web: LocalWeb) => web.hits.filter((hit) => JSON.stringify(hit.headers).includes(secret)).length

describe('a source secret header and redirects', () => {
  it('an http source: follows a redirect to another origin without the secret, keeps it on its own', async () => {
    const put = await putSource(server, adminKey, {
      id: 'worker',
      kind: 'http',
      url: upstream.url,
      headers: { 'X-Api-Key': { secret: 'API_KEY' } },
      tools: [tool('away', '/rpc'), tool('home', '/same')],
    })
    expect(put.status, JSON.stringify(put.body)).toBe(201)
    const away = await server.call('away', {}, { key: adminKey })
    expect(away.status, JSON.stringify(away.body)).toBe(200)
    const home = await server.call('home', {}, { key: adminKey })
    expect(home.status, JSON.stringify(home.body)).toBe(200)
    expect(elsewhere.hits.filter((hit) => hit.url === '/rpc')).toHaveLength(1)
    expect(secretsSeen(elsewhere)).toBe(0)
    // Its own origin got the secret on the first request and after the same-origin redirect.
    expect(upstream.hits.filter((hit) => hit.headers['x-api-key'] === secret).map((hit) => hit.url)).toEqual([
      '/rpc',
      '/same',
      '/rpc-here',
    ])
  })

  it('an OpenAPI source: a 302 from its base URL to another origin carries no secret', async () => {
    const put = await putSource(server, adminKey, {
      id: 'shop',
      kind: 'openapi',
      headers: { 'X-Api-Key': { secret: 'API_KEY' } },
      document: {
        openapi: '3.1.0',
        info: { title: 'Shop', version: '1' },
        servers: [{ url: `${upstream.url}/api` }],
        paths: {
          '/items': {
            get: {
              operationId: 'listItems',
              summary: 'List items',
              responses: {
                '200': { description: 'ok', content: { 'application/json': { schema: { type: 'array' } } } },
              },
            },
          },
        },
      },
    })
    expect(put.status, JSON.stringify(put.body)).toBe(201)
    const listed = await server.call('listItems', {}, { key: adminKey })
    expect(listed.status, JSON.stringify(listed.body)).toBe(200)
    expect(elsewhere.hits.filter((hit) => hit.url === '/api/items')).toHaveLength(1)
    expect(secretsSeen(elsewhere)).toBe(0)
  })
})
