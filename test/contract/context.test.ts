import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestServer } from '../support/server'

const key = 'context-full-key-0123456789'
const readerKey = 'context-reader-key-0123456789'
const fetcherKey = 'context-fetcher-key-0123456789'

let server: TestServer

beforeAll(async () => {
  server = await startTestServer(
    { TOOLPORT_API_KEYS: `acme=${key}`, TOOLPORT_MAX_FILE_BYTES: '2097152' },
    {
      fileKeys: [
        { tenant: 'acme', key: readerKey, tools: ['read_file', 'list_files'] },
        { tenant: 'acme', key: fetcherKey, tools: ['http_fetch', 'read_file'] },
      ],
    },
  )
  const root = 'tenants/acme/workspaces/proj'
  await server.storage.put(`${root}/README.md`, '# proj\n')
  await server.storage.put(`${root}/src/app.ts`, 'export {}\n'.repeat(200))
  await Promise.all(
    Array.from({ length: 250 }, (_, index) =>
      server.storage.put(`tenants/acme/workspaces/big/f${String(index).padStart(3, '0')}.txt`, 'x'),
    ),
  )
})
afterAll(async () => {
  await server.stop()
})

async function context(query: string, withKey: string | null = key) {
  const response = await fetch(`${server.url}/v1/context${query}`, {
    headers: withKey ? { authorization: `Bearer ${withKey}` } : {},
  })
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() }
}

describe('GET /v1/context', () => {
  it('renders the file tree, the limits and the tools with their effects as plain text', async () => {
    const result = await context('?workspace=proj')
    expect(result.status).toBe(200)
    expect(result.type).toContain('text/plain')
    expect(result.text).toContain('workspace "proj"')
    expect(result.text).toMatch(/^ {2}README\.md \(7 B\)$/m)
    expect(result.text).toMatch(/^ {2}src\/$/m)
    expect(result.text).toMatch(/^ {4}app\.ts \(2 KB\)$/m)
    expect(result.text).toContain('Files up to 2 MB')
    expect(result.text).toContain('100000 characters')
    expect(result.text).toContain('execute_command stops a command after 30 s')
    expect(result.text).toContain('- read_file [read]: Read file')
    expect(result.text).toContain('- delete_file [destructive]: Delete file')
    expect(result.text).toMatch(/Effects: read changes nothing; write changes workspace files/)
  })

  it('?format=json gives the same facts as data', async () => {
    const result = await context('?workspace=proj&format=json')
    expect(result.type).toContain('application/json')
    const body = JSON.parse(result.text)
    expect(body.files).toEqual({
      entries: [
        { path: 'README.md', type: 'file', size: 7 },
        { path: 'src', type: 'dir', size: 0 },
        { path: 'src/app.ts', type: 'file', size: 2000 },
      ],
      truncated: false,
    })
    expect(body.limits).toEqual({
      max_file_bytes: 2097152,
      max_response_chars: 100000,
      shell_timeout_seconds: { default: 30, max: 3600 },
    })
    expect(body.tools).toContainEqual({ name: 'write_file', title: 'Write file', effect: 'write' })
  })

  it('shows a limited key only its tools, and no shell limits when it may not run commands', async () => {
    const body = JSON.parse((await context('?workspace=proj&format=json', readerKey)).text)
    expect(body.tools.map((tool: { name: string }) => tool.name)).toEqual([
      'read_file',
      'list_files',
      'get_job',
      'cancel_job',
    ])
    expect(body.limits.shell_timeout_seconds).toBeUndefined()
    const text = (await context('?workspace=proj', readerKey)).text
    expect(text).not.toContain('execute_command')
    expect(text).toContain('Effects: read changes nothing; write changes workspace files.')
  })

  it('lists no file to a key that may not call list_files', async () => {
    const body = JSON.parse((await context('?workspace=proj&format=json', fetcherKey)).text)
    expect(body.files).toBeUndefined()
    expect(body.workspace).toBe('proj')
    const text = (await context('?workspace=proj', fetcherKey)).text
    expect(text).not.toContain('README.md')
    expect(text).not.toMatch(/^Files/m)
    expect(text).toContain('http_fetch')
  })

  it('bounds the tree at 200 entries and says more exist', async () => {
    const body = JSON.parse((await context('?workspace=big&format=json')).text)
    expect(body.files.entries).toHaveLength(200)
    expect(body.files.truncated).toBe(true)
    expect((await context('?workspace=big')).text).toContain('more entries exist; list_files shows the rest')
  })

  it('describes an empty workspace, and defaults to "default"', async () => {
    expect((await context('')).text).toContain('workspace "default"')
    expect((await context('?workspace=nothing-here')).text).toContain('the workspace is empty')
  })

  it('needs a key, a valid workspace and a known format', async () => {
    expect((await context('?workspace=proj', null)).status).toBe(401)
    const badWorkspace = await context('?workspace=..')
    expect(badWorkspace.status).toBe(400)
    expect(JSON.parse(badWorkspace.text)).toMatchObject({ code: 'validation', field: 'workspace' })
    const badFormat = await context('?format=xml')
    expect(badFormat.status).toBe(400)
    expect(JSON.parse(badFormat.text)).toMatchObject({ code: 'validation', field: 'format' })
  })
})

describe('GET /v1/context: the policies of this key', () => {
  const gated = 'policy-gated-key-0123456789'
  const approver = 'policy-approver-key-0123456789'
  let policed: TestServer

  beforeAll(async () => {
    policed = await startTestServer(
      {
        TOOLPORT_API_KEYS: `acme=${gated}`,
        TOOLPORT_APPROVAL: 'destructive',
        TOOLPORT_SHELL_ALLOW: 'ls,cat,rm',
        TOOLPORT_SHELL_DENY: 'rm',
        TOOLPORT_ENV_ALLOW: 'REGION,STAGE',
        TOOLPORT_SEARXNG_URL: 'http://127.0.0.1:9/search',
        TOOLPORT_SHELL_DEFAULT_TIMEOUT_SECONDS: '60',
      },
      { shell: true, fileKeys: [{ tenant: 'acme', key: approver, approver: true }] },
    )
  }, 60_000)
  afterAll(async () => {
    await policed?.stop()
  })

  const read = async (key: string, format = 'json') => {
    const response = await fetch(`${policed.url}/v1/context?format=${format}`, {
      headers: { authorization: `Bearer ${key}` },
    })
    return format === 'json' ? response.json() : response.text()
  }

  it('names the shell policy, the readable variables, web search and the approval rules', async () => {
    const body = await read(gated)
    expect(body.policies).toEqual({
      shell: { allow: ['ls', 'cat', 'rm'], deny: ['rm'] },
      readable_env: ['REGION', 'STAGE'],
      web_search: { available: true, provider: 'searxng' },
      approval: { required_for: ['destructive'], approver: false },
    })
    expect(body.limits.shell_timeout_seconds).toEqual({ default: 60, max: 3600 })
    const text = await read(gated, 'text')
    expect(text).toContain(
      '- Shell: only these programs may run: ls, cat, rm (and shell builtins); these programs may not run: rm.',
    )
    expect(text).toContain('- get_env may read: REGION, STAGE.')
    expect(text).toContain('- web_search is available (searxng).')
    expect(text).toContain('your destructive calls wait for an approver')
    expect(text).toContain('execute_command stops a command after 60 s')
    expect((await read(approver)).policies.approval).toEqual({ required_for: [], approver: true })
  })

  it('TOOLPORT_SHELL_DEFAULT_TIMEOUT_SECONDS is the default a call gets, and the published one', async () => {
    const catalog = await (
      await fetch(`${policed.url}/v1/tools`, { headers: { authorization: `Bearer ${gated}` } })
    ).json()
    const shell = catalog.tools.find((tool: { name: string }) => tool.name === 'execute_command')
    expect(shell.input_schema.properties.timeout_seconds.default).toBe(60)
    const preview = await fetch(`${policed.url}/v1/tools/execute_command?dry_run=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${approver}` },
      body: JSON.stringify({ command: 'ls' }),
    })
    expect((await preview.json()).preview.timeout_seconds).toBe(60)
  })

  it('a denied program is never listed as allowed in the hint', async () => {
    const denied = await policed.call('execute_command', { command: 'rm -f x' }, { key: approver })
    expect(denied.status).toBe(403)
    expect(denied.body.hint).toContain('"rm" is denied on this service')
    expect(denied.body.hint).toContain('allowed: ls, cat,')
    expect(denied.body.hint).not.toMatch(/allowed: [^.]*\brm\b/)
  })
})
