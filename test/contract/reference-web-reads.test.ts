import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type LocalWeb, startLocalWeb } from '../support/local-web'
import { startTestServer, type TestServer } from '../support/server'

// Reference 002: "web_search and web_fetch are always-available read-only tools for public-web
// discovery and bounded page text ... reads bypass approval while external navigation and interaction
// follow the same policy as plugin tools." With every external call held for an approver, the web reads
// run at once; what sends something waits.

const key = 'web-reads-key-0123456789'
const approver = 'web-reads-approver-0123456789'
let server: TestServer
let web: LocalWeb

beforeAll(async () => {
  web = await startLocalWeb({
    '/page': (_request, response) => {
      response.setHeader('content-type', 'text/html')
      response.end(
        '<html><head><title>Quarterly</title></head><body><article><p>Revenue grew.</p></article></body></html>',
      )
    },
    '/search': (_request, response) => {
      response.setHeader('content-type', 'application/json')
      response.end(JSON.stringify({ results: [{ title: 'Result', url: 'https://example.com/r', content: 'a hit' }] }))
    },
    '/form': (_request, response) => {
      response.end('posted')
    },
  })
  server = await startTestServer(
    {
      TOOLPORT_API_KEYS: `acme=${key}`,
      TOOLPORT_APPROVAL: 'external',
      TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${web.port}`,
      TOOLPORT_SEARXNG_URL: web.url,
    },
    { fileKeys: [{ tenant: 'acme', key: approver, approver: true }] },
  )
})
afterAll(async () => {
  await server?.stop()
  await web?.stop()
})

describe('reads of the public web (reference 002)', () => {
  it('runs web_fetch and web_search at once under an approval policy for external calls', async () => {
    const page = await server.call('web_fetch', { url: `${web.url}/page` }, { key })
    expect(page.status).toBe(200)
    expect(page.body.content).toContain('Revenue grew.')
    const found = await server.call('web_search', { query: 'quarterly revenue' }, { key })
    expect(found.status).toBe(200)
    expect(found.body.results).toEqual([{ title: 'Result', url: 'https://example.com/r', snippet: 'a hit' }])
  })

  it('weighs an http_fetch by its method: a GET reads, a POST waits for the approver', async () => {
    const read = await server.call('http_fetch', { url: `${web.url}/page` }, { key })
    expect(read.status).toBe(200)
    const before = web.hits.filter((hit) => hit.url === '/form').length
    const send = await server.call('http_fetch', { url: `${web.url}/form`, method: 'POST', body: 'x=1' }, { key })
    expect(send.status).toBe(202)
    expect(send.body).toMatchObject({ status: 'pending_approval' })
    const card = await fetch(`${server.url}/v1/approvals/${send.body.approval_id}`, {
      headers: { authorization: `Bearer ${approver}` },
    })
    expect(await card.json()).toMatchObject({ tool: 'http_fetch', effect: 'external' })
    // Nothing was sent before anyone decided.
    expect(web.hits.filter((hit) => hit.url === '/form').length).toBe(before)
  })

  it('lists them as reads that reach the open world, in the catalog and to MCP clients', async () => {
    const listed = await fetch(`${server.url}/v1/tools`, { headers: { authorization: `Bearer ${key}` } })
    const { tools } = (await listed.json()) as { tools: Array<{ name: string; effect: string }> }
    const effectOf = (name: string) => tools.find((tool) => tool.name === name)?.effect
    expect([effectOf('web_fetch'), effectOf('web_search'), effectOf('http_fetch')]).toEqual([
      'read',
      'read',
      'external',
    ])
    const client = new Client({ name: 'web-reads', version: '1.0.0' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    )
    const annotations = new Map((await client.listTools()).tools.map((tool) => [tool.name, tool.annotations]))
    for (const name of ['web_fetch', 'web_search']) {
      expect(annotations.get(name)).toMatchObject({ readOnlyHint: true, openWorldHint: true, destructiveHint: false })
    }
    expect(annotations.get('read_file')).toMatchObject({ readOnlyHint: true, openWorldHint: false })
    await client.close()
  })
})
