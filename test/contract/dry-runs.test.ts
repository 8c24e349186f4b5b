import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ObjectStore } from '../../src/storage/store'
import { allTools } from '../../src/tools/builtins'
import { titleOfCall } from '../../src/tools/tool'
import { type LocalWeb, startLocalWeb } from '../support/local-web'
import { startTestServer, type TestServer } from '../support/server'

// Every tool that writes, reaches out or destroys answers ?dry_run=true with what it would do, in the
// shape its preview declares, and changes nothing in storage and sends nothing.

let server: TestServer
let site: LocalWeb
let sessionId = ''
let jobId = ''

const page = '<html><head><title>Form</title></head><body><a href="/next">Next</a><input id="q"></body></html>'

/** Every stored object with its etag: equal snapshots mean nothing changed. */
async function snapshot(storage: ObjectStore): Promise<Record<string, string>> {
  const entries: Record<string, string> = {}
  let cursor: string | undefined
  do {
    const listed = await storage.list('', cursor ? { cursor } : {})
    for (const object of listed.objects) {
      // Locks come and go with every call; the objects they guard are what must not change.
      if (!object.key.endsWith('.lock')) entries[object.key] = object.etag
    }
    cursor = listed.cursor
  } while (cursor)
  return entries
}

beforeAll(async () => {
  site = await startLocalWeb({
    '/page': (_request, response) => {
      response.setHeader('content-type', 'text/html')
      response.end(page)
    },
  })
  server = await startTestServer(
    {
      TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${site.port}`,
      TOOLPORT_SEARXNG_URL: `${site.url}/search`,
      TOOLPORT_BROWSER_ALLOW_EVALUATE: 'true',
    },
    { shell: true },
  )
  await server.call('write_file', { path: 'seed.txt', content: 'one\ntwo\n' })
  await server.call('write_file', { path: 'reports/q3.pdf', content: 'old' })
  const opened = await server.call('browser_open', { url: `${site.url}/page` })
  expect(opened.status, JSON.stringify(opened.body)).toBe(200)
  sessionId = opened.body.session_id
  const job = await fetch(`${server.url}/v1/tools/list_files?async=true`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  })
  jobId = (await job.json()).job_id
  // Finished before the dry runs start, so its record does not change under their storage snapshots.
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    const polled = await (await fetch(`${server.url}/v1/jobs/${jobId}`)).json()
    if (polled.status === 'succeeded') break
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}, 120_000)
afterAll(async () => {
  await server?.call('browser_close', { session_id: sessionId })
  await server?.stop()
  await site?.stop()
})

const examples = (): Record<string, Record<string, unknown>> => ({
  write_file: { path: 'new.txt', content: 'x' },
  apply_edit: { path: 'seed.txt', old_text: 'one', new_text: '1' },
  multi_edit: { path: 'seed.txt', edits: [{ old_text: 'two', new_text: '2' }] },
  revert_edit: { path: 'seed.txt', old_text: 'one', new_text: 'uno' },
  delete_file: { path: 'seed.txt' },
  execute_command: { command: 'touch made.txt && echo hi > seed.txt' },
  http_fetch: { url: `${site.url}/page`, method: 'POST', headers: { Authorization: 'Bearer s3cret' }, body: 'x' },
  web_fetch: { url: `${site.url}/page` },
  web_search: { query: 'toolport' },
  screenshot: { url: `${site.url}/page` },
  pdf_generation: { content: '# Q3', output_path: 'reports/q3.pdf' },
  office_document: { document_type: 'excel', title: 'Sales', content: 'a,b\n1,2' },
  browser_open: { url: `${site.url}/page` },
  browser_navigate: { session_id: sessionId, url: `${site.url}/page` },
  browser_back: { session_id: sessionId },
  browser_click: { session_id: sessionId, ref: 'e2', element: 'Next link' },
  browser_type: { session_id: sessionId, ref: 'e3', text: 'x' },
  browser_select_option: { session_id: sessionId, ref: 'e3', values: ['a'] },
  browser_press_key: { session_id: sessionId, key: 'Enter' },
  browser_hover: { session_id: sessionId, ref: 'e2' },
  browser_scroll: { session_id: sessionId, y: 200 },
  browser_screenshot: { session_id: sessionId },
  browser_pdf: { session_id: sessionId, output_path: 'page.pdf' },
  browser_file_upload: { session_id: sessionId, ref: 'e3', paths: ['seed.txt'] },
  browser_download: { session_id: sessionId, ref: 'e2' },
  browser_evaluate: { session_id: sessionId, expression: 'document.title' },
  browser_close: { session_id: sessionId },
  cancel_job: { job_id: jobId },
})

describe('?dry_run=true', () => {
  it('covers every built-in tool that is not read-only, and the reads that reach the open web', async () => {
    const catalog = await (await fetch(`${server.url}/v1/tools`)).json()
    const webReads = new Set(['web_fetch', 'web_search'])
    const acting = catalog.tools
      .filter((tool: { name: string; effect: string }) => tool.effect !== 'read' || webReads.has(tool.name))
      .map((tool: { name: string }) => tool.name)
    expect(acting.sort()).toEqual(Object.keys(examples()).sort())
  })

  it('answers each in its declared preview shape, changing nothing and sending nothing', async () => {
    for (const [name, input] of Object.entries(examples())) {
      const tool = allTools.find((candidate) => candidate.name === name)
      expect(tool?.preview, name).toBeDefined()
      const before = await snapshot(server.storage)
      const hits = site.hits.length
      const response = await fetch(`${server.url}/v1/tools/${name}?dry_run=true`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(input),
      })
      const body = await response.json()
      expect(response.status, `${name}: ${JSON.stringify(body)}`).toBe(200)
      expect(body.dry_run, name).toBe(true)
      const parsed = tool?.preview?.safeParse(body.preview)
      expect(parsed?.success, `${name}: ${JSON.stringify(parsed?.error?.issues)}`).toBe(true)
      expect(await snapshot(server.storage), name).toEqual(before)
      expect(site.hits.length, `${name} sent a request`).toBe(hits)
    }
  })

  it('says what matters for each kind of call', async () => {
    const dry = async (name: string, input = examples()[name]) => {
      const response = await fetch(`${server.url}/v1/tools/${name}?dry_run=true`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(input),
      })
      const body = await response.json()
      expect(response.status, `${name}: ${JSON.stringify(body)}`).toBe(200)
      return body.preview
    }
    const shell = await dry('execute_command')
    expect(shell).toMatchObject({
      policy: { verdict: 'allowed' },
      working_directory: '/workspace',
      timeout_seconds: 30,
    })
    expect(shell.sync.files).toBeGreaterThanOrEqual(2)
    expect(shell.sandbox.executor).toBe('bwrap')
    const fetched = await dry('http_fetch')
    expect(fetched.request).toMatchObject({ method: 'POST', headers: { Authorization: '***' }, body_bytes: 1 })
    expect(fetched.address).toMatchObject({ allowed: true, address: '127.0.0.1' })
    const pdf = await dry('pdf_generation')
    expect(pdf.output).toEqual({ path: 'reports/q3.pdf', generated: false, overwrites: true })
    expect(pdf.page).toMatchObject({ size: 'A4', orientation: 'portrait', margins_mm: { top: 20 } })
    const office = await dry('office_document')
    expect(office.output).toMatchObject({ generated: true, overwrites: false })
    expect(office.output.path).toMatch(/^outputs\/sales-.*\.xlsx$/)
    const click = await dry('browser_click')
    expect(click).toMatchObject({ action: 'Click Next link', page: { url: `${site.url}/page`, title: 'Form' } })
    // A browser call that saves a file previews the path its run would write, extension included.
    expect((await dry('browser_screenshot')).output.path).toMatch(/^outputs\/.+\.png$/)
    const jpeg = await dry('browser_screenshot', { session_id: sessionId, format: 'jpeg', output_path: 'shots/a' })
    expect(jpeg.output).toEqual({ path: 'shots/a.jpg', generated: false, overwrites: false })
    expect((await dry('browser_pdf')).output).toEqual({ path: 'page.pdf', generated: false, overwrites: false })
    const download = await dry('browser_download', { session_id: sessionId, ref: 'e2', output_path: 'got/report.pdf' })
    expect(download.output).toEqual({ path: 'got/report.pdf', generated: false, overwrites: false })
    expect((await dry('browser_download')).output.path).toMatch(/^outputs\/.+\.bin$/)
    const search = await dry('web_search')
    expect(search).toMatchObject({ query: 'toolport', provider: 'searxng' })
  })

  it('answers the refusal the call would get', async () => {
    const refused = await fetch(`${server.url}/v1/tools/http_fetch?dry_run=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'http://127.0.0.1:9/' }),
    })
    expect(refused.status).toBe(403)
    const unknownSession = await fetch(`${server.url}/v1/tools/browser_click?dry_run=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ session_id: 'nope-0000', ref: 'e1' }),
    })
    expect(unknownSession.status).toBe(404)
  })
})

describe('call titles', () => {
  it('every tool names the call, not only the tool', () => {
    const inputs: Record<string, Record<string, unknown>> = {
      ...examples(),
      read_file: { path: 'a.txt' },
      list_files: { path: 'src' },
      excel_analyze: { path: 'data.xlsx' },
      get_env: { name: 'REGION' },
      browser_snapshot: { session_id: 's-1' },
      browser_wait_for: { session_id: 's-1', text: 'Done' },
      browser_tabs: { session_id: 's-1' },
      browser_console: { session_id: 's-1' },
      get_job: { job_id: jobId },
    }
    const generic: string[] = []
    for (const tool of allTools) {
      if (tool.name === 'system_info') continue
      const input = tool.input.parse(inputs[tool.name] ?? {})
      if (titleOfCall(tool, input) === tool.title) generic.push(tool.name)
    }
    expect(generic).toEqual([])
    const titled = (name: string, input: Record<string, unknown>) => {
      const tool = allTools.find((candidate) => candidate.name === name)
      return tool ? titleOfCall(tool, tool.input.parse(input)) : ''
    }
    expect(titled('http_fetch', { url: 'https://example.com/api' })).toBe('GET example.com/api')
    expect(titled('web_search', { query: 'q3 results' })).toBe('Search: q3 results')
    expect(titled('pdf_generation', { content: 'x', output_path: 'reports/q3.pdf' })).toBe('Make PDF reports/q3.pdf')
    expect(titled('excel_analyze', { path: 'data.xlsx' })).toBe('Analyze data.xlsx')
    expect(titled('get_env', { name: 'REGION' })).toBe('Read variable REGION')
  })
})
