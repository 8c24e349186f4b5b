import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { refFor as ref, startBrowserSite } from '../support/browser-site'
import { type LocalWeb, startLocalWeb } from '../support/local-web'
import { startTestServer, type TestServer } from '../support/server'

/** The same session flow as the REST suite, driven by the MCP SDK client over /mcp. */
const key = 'mcp-browser-key-0123456789'
let victim: LocalWeb
let site: LocalWeb
let server: TestServer
let client: Client

beforeAll(async () => {
  victim = await startLocalWeb({})
  site = await startBrowserSite(victim.port)
  server = await startTestServer({
    TOOLPORT_API_KEYS: `acme=${key}`,
    TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${site.port}`,
  })
  client = new Client({ name: 'toolport-browser-test', version: '1.0.0' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp?workspace=browsing`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  )
})
afterAll(async () => {
  await client?.close()
  await server?.stop()
  await site?.stop()
  await victim?.stop()
})

type Block = { type: string; text?: string; data?: string; mimeType?: string; uri?: string }

// biome-ignore lint/suspicious/noExplicitAny: results are checked field by field
async function call(name: string, args: Record<string, unknown>): Promise<{ structured: any; content: Block[] }> {
  const result = await client.callTool({ name, arguments: args })
  expect(result.isError, `${name}: ${JSON.stringify(result.content).slice(0, 1500)}`).toBeFalsy()
  return { structured: result.structuredContent, content: result.content as Block[] }
}

describe('browser sessions over MCP', () => {
  it('lists the browser tools with their effects as annotations', async () => {
    const { tools } = await client.listTools()
    const byName = new Map(tools.map((tool) => [tool.name, tool]))
    for (const name of ['browser_open', 'browser_click', 'browser_snapshot', 'browser_tabs', 'browser_close'])
      expect(byName.has(name), name).toBe(true)
    expect(byName.get('browser_snapshot')?.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false })
    expect(byName.get('browser_console')?.annotations?.readOnlyHint).toBe(true)
    expect(byName.get('browser_tabs')?.annotations?.readOnlyHint).toBe(true)
    expect(byName.get('browser_navigate')?.annotations).toMatchObject({ readOnlyHint: false, openWorldHint: true })
    expect(byName.get('browser_click')?.annotations?.openWorldHint).toBe(true)
  })

  it('logs in, reads page two, uploads, downloads, shows a screenshot as an image, and reports what it blocked', {
    timeout: 90_000,
  }, async () => {
    const login = await call('browser_open', { url: `${site.url}/login` })
    const id = login.structured.session_id
    await call('browser_type', {
      session_id: id,
      ref: ref(login.structured.snapshot, 'textbox', 'User name'),
      text: 'alice',
    })
    await call('browser_type', {
      session_id: id,
      ref: ref(login.structured.snapshot, 'textbox', 'Password'),
      text: 'wonderland',
      submit: true,
    })
    const account = await call('browser_snapshot', { session_id: id })
    expect(account.structured.snapshot).toContain('Welcome, alice')
    const orders = await call('browser_click', {
      session_id: id,
      ref: ref(account.structured.snapshot, 'link', 'orders'),
    })
    const two = await call('browser_click', {
      session_id: id,
      ref: ref(orders.structured.snapshot, 'link', 'Next page'),
    })
    expect(two.structured.title).toBe('Orders page 2')
    expect(two.structured.snapshot).toContain('Item 7')

    const shot = await call('browser_screenshot', { session_id: id })
    const image = shot.content.find((block) => block.type === 'image')
    expect(image?.mimeType).toBe('image/png')
    expect(
      Buffer.from(image?.data ?? '', 'base64')
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG')
    // The picture is a content block, not part of the structured result or its JSON text.
    expect(shot.structured.image).toBeUndefined()
    expect(shot.content.find((block) => block.type === 'text')?.text).not.toContain(image?.data?.slice(0, 40))
    expect(shot.content.some((block) => block.type === 'resource_link')).toBe(true)

    await call('write_file', { path: 'upload/hello.txt', content: 'hello' })
    const form = await call('browser_navigate', { session_id: id, url: `${site.url}/form` })
    await call('browser_file_upload', {
      session_id: id,
      ref: ref(form.structured.snapshot, 'button', 'Document'),
      paths: ['upload/hello.txt'],
    })
    const received = await call('browser_click', {
      session_id: id,
      ref: ref(form.structured.snapshot, 'button', 'Send'),
    })
    expect(received.structured.snapshot).toContain('Received hello.txt (5 bytes), colour red')

    const reports = await call('browser_navigate', { session_id: id, url: `${site.url}/report` })
    const saved = await call('browser_download', {
      session_id: id,
      ref: ref(reports.structured.snapshot, 'link', 'report'),
    })
    const path = saved.structured.files[0].path
    expect(path).toMatch(/\.csv$/)
    const read = await call('read_file', { path })
    expect(read.structured.content).toContain('1,10.00')

    const sneaky = await call('browser_navigate', { session_id: id, url: `${site.url}/sneaky` })
    expect(sneaky.structured.blocked.map((request: { url: string }) => request.url)).toEqual(
      expect.arrayContaining([
        'http://169.254.169.254/latest/meta-data/',
        `http://127.0.0.1:${victim.port}/from-script`,
      ]),
    )
    const refused = await client.callTool({
      name: 'browser_navigate',
      arguments: { session_id: id, url: `${site.url}/to-blocked` },
    })
    expect(refused.isError).toBe(true)
    expect(JSON.stringify(refused.content)).toContain('permission_denied')
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(victim.hits).toEqual([])
    await call('browser_close', { session_id: id })
  })
})
