import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestServer } from '../support/server'
import { bundleStdioFixture, type StdioFixture } from '../support/stdio-fixture'

// Operator sources from a watched folder, run by bubblewrap: a stdio MCP server (the SDK's own server
// class, bundled) kept warm, and command tools whose input is bound into argv without any shell.

const adminKey = 'sandbox-src-admin-0123456789'
let server: TestServer
let fixture: StdioFixture
let folder: string

const stdioManifest = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  kind: 'mcp',
  command: ['node', '/opt/fixture/server.mjs'],
  mounts: [{ host: fixture.folder, sandbox: '/opt/fixture' }],
  timeout_seconds: 5,
  ...extra,
})

const nodeTool = (name: string, script: string, args: string[], extra: Record<string, unknown> = {}) => ({
  name,
  description: `The ${name} tool.`,
  effect: 'write',
  input_schema: {
    type: 'object',
    properties: { text: { type: 'string' }, output_path: { type: 'string' }, name: { type: 'string' } },
  },
  argv: ['node', '-e', script, ...args],
  ...extra,
})

const commandManifest = {
  id: 'text',
  kind: 'command',
  tools: [
    nodeTool(
      'upper',
      'process.stdout.write(JSON.stringify({ upper: process.argv[1].toUpperCase() }))',
      ['{input.text}'],
      {
        effect: 'read',
        output_schema: { type: 'object', properties: { upper: { type: 'string' } }, required: ['upper'] },
      },
    ),
    nodeTool(
      'words',
      "let s = ''; process.stdin.on('data', (d) => (s += d)).on('end', () => process.stdout.write(JSON.stringify({ words: JSON.parse(s).text.split(/\\s+/).length })))",
      [],
      { stdin: 'json', output_schema: { type: 'object', properties: { words: { type: 'integer' } } } },
    ),
    nodeTool(
      'report',
      "const fs = require('fs'); fs.mkdirSync(require('path').dirname(process.argv[1]), { recursive: true }); fs.writeFileSync(process.argv[1], 'report for ' + process.argv[2])",
      ['{input.output_path}', '{input.name}'],
      { output_files: ['{input.output_path}'] },
    ),
    nodeTool('broken', "process.stdout.write('not json'); process.stderr.write('it broke here')", [], {
      output_schema: { type: 'object', properties: { ok: { type: 'boolean' } } },
    }),
    {
      name: 'plain',
      description: 'Writes to both streams and exits 3.',
      effect: 'read',
      input_schema: { type: 'object', properties: {} },
      argv: ['sh', '-c', 'echo out; echo err >&2; exit 3'],
    },
  ],
}

beforeAll(async () => {
  fixture = await bundleStdioFixture()
  folder = await mkdtemp(join(tmpdir(), 'toolport-sources-'))
  await writeFile(join(folder, 'local.json'), JSON.stringify(stdioManifest('local')))
  await writeFile(join(folder, 'idle.json'), JSON.stringify(stdioManifest('idle', { idle_seconds: 5 })))
  await writeFile(join(folder, 'text.json'), JSON.stringify(commandManifest))
  await writeFile(
    join(folder, 'hang.json'),
    JSON.stringify({
      id: 'hang',
      kind: 'mcp',
      command: ['node', '-e', 'setInterval(() => {}, 1000)'],
      timeout_seconds: 2,
    }),
  )
  await writeFile(
    join(folder, 'absent.json'),
    JSON.stringify({ id: 'absent', kind: 'mcp', command: ['/usr/bin/no-such-server'], timeout_seconds: 2 }),
  )
  await writeFile(join(folder, 'broken.yaml'), 'id: broken\nkind: mcp\nurl: [not, a, url]\n')
  server = await startTestServer(
    {
      TOOLPORT_SOURCES_DIR: folder,
      TOOLPORT_TENANT_SOURCE_KINDS: 'http,mcp,openapi,alias,command,mcp-stdio',
    },
    { shell: true, fileKeys: [{ tenant: 'acme', key: adminKey, admin: true }] },
  )
}, 120_000)
afterAll(async () => {
  await server?.stop()
  await fixture?.remove()
  if (folder) await rm(folder, { recursive: true, force: true })
})

const call = (tool: string, input: unknown) => server.call(tool, input, { key: adminKey, workspace: 'sandboxed' })

async function statuses(): Promise<Array<{ id: string; status: string; reason?: string; owner: string }>> {
  const response = await fetch(`${server.url}/v1/sources`, { headers: { authorization: `Bearer ${adminKey}` } })
  return (await response.json()).sources
}

describe('a stdio mcp source in the sandbox', () => {
  it('starts the server inside bubblewrap and keeps it warm between calls', async () => {
    expect((await call('local_echo', { text: 'from the sandbox' })).body).toEqual({
      content: 'from the sandbox',
      truncated: false,
    })
    const first = (await call('local_pid', {})).body.content
    const second = (await call('local_pid', {})).body.content
    expect(first).toMatch(/^[0-9a-f-]{36}$/)
    expect(first).toBe(second)
  })

  it('answers 502 with the stderr tail when the server crashes, and starts it again for the next call', async () => {
    const before = (await call('local_pid', {})).body.content
    const crashed = await call('local_crash', {})
    expect(crashed.status).toBe(502)
    expect(crashed.body.code).toBe('connection')
    const after = await call('local_pid', {})
    expect(after.status).toBe(200)
    expect(after.body.content).not.toBe(before)
  })

  it('drops a server that writes garbage or floods its stdout, and recovers', async () => {
    const garbage = await call('local_garbage', {})
    expect(garbage.status).toBe(502)
    expect(garbage.body.detail).toContain('not JSON-RPC')
    const flood = await call('local_flood', {})
    expect(flood.status).toBe(502)
    expect((await call('local_echo', { text: 'ok' })).body.content).toBe('ok')
  })

  it('stops an idle server after idle_seconds and starts a fresh one', async () => {
    const first = (await call('idle_pid', {})).body.content
    await new Promise((resolve) => setTimeout(resolve, 6_500))
    const second = (await call('idle_pid', {})).body.content
    expect(second).not.toBe(first)
  }, 30_000)

  it('puts servers that hang, are missing or whose manifest is broken in error, with reasons', async () => {
    const byId = new Map((await statuses()).map((status) => [status.id, status]))
    expect(byId.get('hang')).toMatchObject({ status: 'error', owner: 'operator' })
    expect(byId.get('absent')).toMatchObject({ status: 'error' })
    expect(byId.get('broken')).toMatchObject({ status: 'error' })
    expect(byId.get('broken')?.reason).toContain('url')
    expect(byId.get('local')).toMatchObject({ status: 'ready' })
  })

  it('is callable over toolport MCP by the SDK client', async () => {
    const client = new Client({ name: 'stdio-source', version: '1.0.0' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${adminKey}` } },
      }),
    )
    const result = await client.callTool({ name: 'local_add', arguments: { a: 20, b: 22 } })
    expect(result.structuredContent).toEqual({ sum: 42 })
    await client.close()
  })
})

describe('a command source', () => {
  it('binds input into whole argv elements: shell syntax stays text', async () => {
    const text = '$(touch /workspace/pwned); `id` | cat && echo "x" > y'
    const upper = await call('upper', { text })
    expect(upper.status).toBe(200)
    expect(upper.body).toEqual({ upper: text.toUpperCase() })
    expect(
      (await call('list_files', { path: '' })).body.entries.map((entry: { path: string }) => entry.path),
    ).not.toContain('pwned')
  })

  it('refuses a value that would reach the program as an option', async () => {
    const injected = await call('upper', { text: '--eval=process.exit(1)' })
    expect(injected.status).toBe(400)
    expect(injected.body).toMatchObject({ code: 'validation', field: 'text' })
  })

  it('hands the input as JSON on stdin, and returns files it declares with links', async () => {
    expect((await call('words', { text: 'one two three' })).body).toEqual({ words: 3 })
    const report = await call('report', { output_path: 'reports/r.txt', name: 'Q3' })
    expect(report.status).toBe(200)
    expect(report.body.files).toMatchObject([{ path: 'reports/r.txt', mime_type: 'text/plain; charset=utf-8' }])
    expect(await (await fetch(report.body.files[0].url)).text()).toBe('report for Q3')
    expect((await call('read_file', { path: 'reports/r.txt' })).body.content).toBe('report for Q3')
  })

  it('answers 502 with a stderr excerpt when stdout is not the promised JSON; plain results otherwise', async () => {
    const broken = await call('broken', {})
    expect(broken.status).toBe(502)
    expect(broken.body.detail).toContain('it broke here')
    expect((await call('plain', {})).body).toEqual({
      exit_code: 3,
      stdout: 'out\n',
      stderr: 'err\n',
      truncated: false,
      timed_out: false,
    })
  })

  it('shows the resolved argv in a dry run without running it', async () => {
    const dry = await fetch(`${server.url}/v1/tools/report?dry_run=true&workspace=sandboxed`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ output_path: 'reports/new.txt', name: 'X' }),
    })
    const body = await dry.json()
    expect(body.preview.argv.slice(-2)).toEqual(['reports/new.txt', 'X'])
    expect(body.preview.output_files).toEqual([{ path: 'reports/new.txt', exists: false }])
    expect((await call('read_file', { path: 'reports/new.txt' })).status).toBe(404)
  })

  it('lets a tenant register one where the operator allows it, but never with host mounts', async () => {
    const put = (manifest: unknown) =>
      fetch(`${server.url}/v1/sources/mine`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(manifest),
      })
    const tool = {
      name: 'mine_hello',
      description: 'Hello.',
      effect: 'read',
      input_schema: { type: 'object' },
      argv: ['echo', 'hello'],
    }
    const mounted = await put({
      id: 'mine',
      kind: 'command',
      mounts: [{ host: '/etc', sandbox: '/host-etc' }],
      tools: [tool],
    })
    expect(mounted.status).toBe(403)
    expect(await mounted.json()).toMatchObject({ field: 'mounts' })
    expect((await put({ id: 'mine', kind: 'command', tools: [tool] })).status).toBe(201)
    expect((await call('mine_hello', {})).body).toMatchObject({ exit_code: 0, stdout: 'hello\n' })
  })
})

describe('the operator folder, live', () => {
  const catalog = async () =>
    (await fetch(`${server.url}/v1/tools`, { headers: { authorization: `Bearer ${adminKey}` } })).json()
  const waitFor = async (check: (tools: Array<{ name: string; description: string }>) => boolean) => {
    for (let attempt = 0; attempt < 100; attempt++) {
      const { tools, revision } = await catalog()
      if (check(tools)) return revision as string
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    throw new Error('the catalog did not change')
  }
  const shout = (description: string) => ({
    id: 'shout',
    kind: 'command',
    tools: [{ name: 'shout', description, effect: 'read', input_schema: { type: 'object' }, argv: ['echo', 'HEY'] }],
  })

  it('picks up a new file, a changed file and a removed file without a restart, within 2 s', async () => {
    const start = (await catalog()).revision
    await writeFile(join(folder, 'shout.json'), JSON.stringify(shout('Shouts.')))
    const added = await waitFor((tools) => tools.some((tool) => tool.name === 'shout'))
    expect(added).not.toBe(start)
    expect((await call('shout', {})).body.stdout).toBe('HEY\n')
    await writeFile(join(folder, 'shout.json'), JSON.stringify(shout('Shouts louder.')))
    const changed = await waitFor((tools) => tools.some((tool) => tool.description === 'Shouts louder.'))
    expect(changed).not.toBe(added)
    await unlink(join(folder, 'shout.json'))
    await waitFor((tools) => !tools.some((tool) => tool.name === 'shout'))
    // Remembered as a removed source's tool: unavailable, not unknown.
    const gone = await call('shout', {})
    expect(gone.status).toBe(503)
    expect(gone.body).toMatchObject({ source: 'shout', source_status: 'removed' })
  })
})

describe('a stdio mcp source where nothing stays warm (as on Lambda)', () => {
  let lambdaLike: TestServer
  let sources: string
  beforeAll(async () => {
    sources = await mkdtemp(join(tmpdir(), 'toolport-sources-cold-'))
    // The process executor has no mounts: the program is named by its own path.
    await writeFile(
      join(sources, 'cold.json'),
      JSON.stringify({
        id: 'cold',
        kind: 'mcp',
        command: ['node', join(fixture.folder, 'server.mjs')],
        timeout_seconds: 5,
      }),
    )
    lambdaLike = await startTestServer(
      { TOOLPORT_SOURCES_DIR: sources, TOOLPORT_SANDBOX: 'process' },
      { shell: true, sourceRuntime: { keepWarm: false } },
    )
  }, 60_000)
  afterAll(async () => {
    await lambdaLike?.stop()
    if (sources) await rm(sources, { recursive: true, force: true })
  })

  it('starts the server for each call and stops it after', async () => {
    const first = await lambdaLike.call('cold_pid', {})
    const second = await lambdaLike.call('cold_pid', {})
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    expect(second.body.content).not.toBe(first.body.content)
    expect((await lambdaLike.call('cold_add', { a: 1, b: 1 })).body).toEqual({ sum: 2 })
  })
})
