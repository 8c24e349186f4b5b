import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type McpHttpFixture, startMcpHttpFixture } from '../support/mcp-http-fixture'
import { compiler } from '../support/schemas'
import { startTestServer, type TestServer } from '../support/server'
import { startSourceUpstreams } from '../support/source-upstreams'
import { putSource } from '../support/sources-api'

// What every kind of source gets, as built-ins do: every platform format, MCP calls, the response cap,
// names that never shadow a built-in; and the operator's trust in the hosts its manifests name.

const adminKey = 'guarantee-admin-key-0123456789'
let server: TestServer
let upstream: Awaited<ReturnType<typeof startSourceUpstreams>>
let mcp: McpHttpFixture
let folder: string

beforeAll(async () => {
  upstream = await startSourceUpstreams()
  mcp = await startMcpHttpFixture()
  folder = await mkdtemp(join(tmpdir(), 'toolport-guarantees-'))
  // An operator source on loopback, named by its own manifest only: no TOOLPORT_FETCH_ALLOW_HOSTS for it.
  await writeFile(
    join(folder, 'pets.yaml'),
    `id: pets\nkind: openapi\nurl: ${upstream.url}/openapi.json\noperations: [listPets, getPet]\n`,
  )
  server = await startTestServer(
    { TOOLPORT_SOURCES_DIR: folder, TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${mcp.port}` },
    { fileKeys: [{ tenant: 'acme', key: adminKey, admin: true }], metrics: true },
  )
  const put = await fetch(`${server.url}/v1/sources/fx`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'fx', kind: 'mcp', url: mcp.url, tools: ['echo', 'add', 'big'] }),
  })
  expect((await put.json()).status).toBe('ready')
})
afterAll(async () => {
  await server?.stop()
  await upstream?.stop()
  await mcp?.stop()
  if (folder) await rm(folder, { recursive: true, force: true })
})

const get = async (path: string) =>
  (await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${adminKey}` } })).json()
const put = (_id: string, manifest: Record<string, unknown>) => putSource(server, adminKey, manifest)

describe('every kind of source, like a built-in', () => {
  it('lets an operator source reach the private host its manifest names, from a YAML file', async () => {
    const listed = await server.call('listPets', {}, { key: adminKey })
    expect(listed.status, JSON.stringify(listed.body)).toBe(200)
    // The same upstream as a tenant source is refused: its host is not in TOOLPORT_FETCH_ALLOW_HOSTS.
    const tenant = await put('mine', { id: 'mine', kind: 'openapi', url: `${upstream.url}/openapi.json` })
    expect(tenant.status).toBe(403)
  })

  it('is in every platform format, strict for OpenAI where the schema allows it, and in MCP tools/list', async () => {
    const names = ['listPets', 'getPet', 'fx_echo', 'fx_add']
    const openai = await get('/v1/tools?format=openai')
    for (const name of names) {
      const tool = openai.tools.find((entry: { function: { name: string } }) => entry.function.name === name)
      expect(tool?.function.strict, name).toBe(true)
      expect(tool.function.parameters.additionalProperties, name).toBe(false)
    }
    const anthropic = await get('/v1/tools?format=anthropic')
    const gemini = await get('/v1/tools?format=gemini')
    const mcpFormat = await get('/v1/tools?format=mcp')
    for (const name of names) {
      expect(
        anthropic.tools.some((tool: { name: string }) => tool.name === name),
        name,
      ).toBe(true)
      expect(
        gemini.tools.some((tool: { name: string }) => tool.name === name),
        name,
      ).toBe(true)
      expect(
        mcpFormat.tools.some((tool: { name: string }) => tool.name === name),
        name,
      ).toBe(true)
    }
    const client = new Client({ name: 'guarantees', version: '1.0.0' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${adminKey}` } },
      }),
    )
    const { tools } = await client.listTools()
    expect(tools.find((tool) => tool.name === 'getPet')?.annotations?.readOnlyHint).toBe(true)
    const pet = await client.callTool({ name: 'getPet', arguments: { petId: 1 } })
    expect(pet.structuredContent).toEqual({ id: 1, name: 'Rex' })
    const echoed = await client.callTool({ name: 'fx_echo', arguments: { text: 'via toolport' } })
    expect(echoed.structuredContent).toEqual({ content: 'via toolport', truncated: false })
    await client.close()
  })

  it('keeps the 100,000-character cap: text is cut with truncated: true, a structured result past it is 413', async () => {
    const cut = await server.call('fx_echo', { text: 'x'.repeat(150_000) }, { key: adminKey })
    expect(cut.status).toBe(200)
    expect(cut.body.truncated).toBe(true)
    expect(JSON.stringify(cut.body).length).toBeLessThanOrEqual(100_000)
    const whole = await server.call('fx_big', { chars: 150_000 }, { key: adminKey })
    expect(whole.status).toBe(413)
    expect(whole.body).toMatchObject({ code: 'size_exceeded' })
    expect((await server.call('fx_big', { chars: 10 }, { key: adminKey })).body).toEqual({ data: 'xxxxxxxxxx' })
  })

  it("never shadows a built-in or another source: a built-in's name is served in the source's namespace, another source's is 409", async () => {
    const shadow = await put('shadow', {
      id: 'shadow',
      kind: 'alias',
      tools: [{ name: 'read_file', tool: 'write_file' }],
    })
    expect(shadow.status).toBe(201)
    expect(shadow.body).toMatchObject({ status: 'ready', tools: ['shadow_read_file'] })
    expect(shadow.body.reason).toContain('read_file is served as shadow_read_file (shadow:read_file)')
    // read_file is the built-in still; the source's tool answers under its namespaced name.
    expect((await server.call('read_file', { path: 'nothing' }, { key: adminKey })).status).toBe(404)
    const written = await server.call('shadow_read_file', { path: 'shadowed.txt', content: 'x' }, { key: adminKey })
    expect(written.status, JSON.stringify(written.body)).toBe(200)
    await fetch(`${server.url}/v1/sources/shadow`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${adminKey}` },
    })
    const dupe = await put('dupe', { id: 'dupe', kind: 'alias', tools: [{ name: 'fx_echo', tool: 'read_file' }] })
    expect(dupe.status).toBe(409)
    expect(dupe.body.detail).toContain('source fx')
    // Nothing was stored, and the source that had the name keeps it.
    expect((await get('/v1/sources')).sources.map((source: { id: string }) => source.id)).not.toContain('dupe')
    expect((await server.call('fx_echo', { text: 'still mine' }, { key: adminKey })).body.content).toBe('still mine')
    expect((await server.call('read_file', { path: 'nothing' }, { key: adminKey })).status).toBe(404)
  })

  it('refuses a name that only spells a taken one another way (case, "-", "_" at an end)', async () => {
    // A built-in's name spelled another way is namespaced like the name itself.
    for (const name of ['Read_File', 'read-file', 'read_file_']) {
      const lookalike = await put('lookalike', {
        id: 'lookalike',
        kind: 'alias',
        tools: [{ name, tool: 'write_file' }],
      })
      expect(lookalike.status, name).toBe(201)
      expect(lookalike.body.tools, name).toEqual([`lookalike_${name}`])
      expect(lookalike.body.reason, name).toContain('the built-in')
      await fetch(`${server.url}/v1/sources/lookalike`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${adminKey}` },
      })
    }
    for (const [name, taken] of [['FX_ECHO', 'source fx']]) {
      const lookalike = await put('lookalike', {
        id: 'lookalike',
        kind: 'alias',
        tools: [{ name, tool: 'write_file' }],
      })
      expect(lookalike.status, name).toBe(409)
      expect(lookalike.body.detail, name).toContain(taken)
      expect(lookalike.body.detail, name).toContain('another way')
    }
    const twins = await put('lookalike', {
      id: 'lookalike',
      kind: 'alias',
      tools: [
        { name: 'Grab', tool: 'read_file' },
        { name: 'grab', tool: 'read_file' },
      ],
    })
    expect(twins.status).toBe(409)
    expect(twins.body.detail).toContain('Grab and grab spell one name two ways')
    expect((await get('/v1/sources')).sources.map((source: { id: string }) => source.id)).not.toContain('lookalike')
  })

  it("counts a tenant's own tools in /metrics without their names; an operator source keeps its own", async () => {
    const echoed = await server.call('fx_echo', { text: 'hi' }, { key: adminKey })
    expect(echoed.status, JSON.stringify(echoed.body)).toBe(200)
    expect((await server.call('listPets', {}, { key: adminKey })).status).toBe(200)
    const metrics = await (
      await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${adminKey}` } })
    ).text()
    expect(metrics).toMatch(/toolport_tool_calls_total\{tool="listPets",source="pets",outcome="ok"\} \d/)
    expect(metrics).toMatch(/toolport_tool_calls_total\{tool="\(tenant source\)",source="\(tenant\)",outcome="ok"\} \d/)
    // The tenant's own usage series (shown to its own keys only) name its tools; nothing else does.
    const shared = metrics
      .split('\n')
      .filter((line) => !line.startsWith('toolport_tenant_'))
      .join('\n')
    expect(shared).not.toMatch(/tool="fx_echo"|source="fx"/)
    expect(metrics).toMatch(/toolport_tenant_calls_total\{tenant="acme",tool="fx_echo",outcome="ok"\} \d/)
  })

  it('publishes the JSON Schema of a manifest, which the examples of the docs satisfy', async () => {
    const schema = await (await fetch(`${server.url}/schemas/source-manifest.json`)).json()
    const validate = compiler('2020').compile(schema)
    const examples = [
      {
        id: 'tickets',
        kind: 'http',
        url: 'https://tickets.example.com/rpc',
        protocol: 'jsonrpc',
        tools: [
          { name: 'create_ticket', effect: 'write', description: 'Open a ticket.', input_schema: { type: 'object' } },
        ],
      },
      { id: 'github', kind: 'mcp', url: 'https://mcp.example.com/mcp' },
      { id: 'pets', kind: 'openapi', url: 'https://pets.example.com/openapi.yaml' },
      {
        id: 'docs',
        kind: 'command',
        tools: [
          {
            name: 'to_docx',
            effect: 'write',
            description: 'Markdown to Word.',
            input_schema: { type: 'object' },
            argv: ['pandoc', '{input.path}'],
          },
        ],
      },
      { id: 'short', kind: 'alias', tools: [{ name: 'sh', tool: 'execute_command' }] },
      { id: 'sheets', kind: 'worker', command: ['python3', '/opt/sheets/worker.py'], tools: [] },
      // Reference 002's plugin manifest, as its worked example writes it (no id, no kind).
      {
        rpc: {
          methods: {
            excel_analyze: {
              description: 'Analyze an Excel file and return sheets and headers.',
              inputSchema: { type: 'object', properties: { filePath: { type: 'string' } }, required: ['filePath'] },
              outputSchema: { type: 'object', properties: { success: { type: 'boolean' } }, required: ['success'] },
            },
          },
        },
        aiTools: [
          { name: 'excel_analyze', method: 'excel_analyze', effect: 'read', description: 'Analyze an Excel file.' },
        ],
      },
      { rpc: { methods: {} }, aiTools: [], enabled: false },
    ]
    for (const example of examples) expect(validate(example), JSON.stringify(validate.errors)).toBe(true)
    expect(validate({ id: 'x', kind: 'http', url: 'https://x.example', tools: [], extra: 1 })).toBe(false)
    expect(validate({ rpc: { methods: {} }, aiTools: [{ name: 'x', method: 'x', effect: 'sometimes' }] })).toBe(false)
  })
})

describe('key scopes and aliases', () => {
  const admin = 'alias-admin-key-0123456789'
  const sourceScoped = 'alias-source-scoped-key-0123456789'
  const readScoped = 'alias-read-scoped-key-0123456789'
  const aliasScoped = 'alias-id-scoped-key-0123456789'
  let aliases: TestServer

  beforeAll(async () => {
    aliases = await startTestServer(
      {},
      {
        fileKeys: [
          { tenant: 'acme', key: admin, admin: true },
          { tenant: 'acme', key: sourceScoped, tools: ['short:*'] },
          { tenant: 'acme', key: readScoped, tools: ['read_file'] },
          { tenant: 'acme', key: aliasScoped, tools: ['short:rd'] },
        ],
      },
    )
    const put = await putSource(aliases, admin, {
      id: 'short',
      kind: 'alias',
      tools: [
        { name: 'wr', tool: 'write_file' },
        { name: 'rd', tool: 'read_file' },
      ],
    })
    expect(put.body.status).toBe('ready')
    expect((await aliases.call('write_file', { path: 'a.txt', content: 'alias' }, { key: admin })).status).toBe(200)
  })
  afterAll(async () => {
    await aliases?.stop()
  })

  const listed = async (key: string) =>
    (await (await fetch(`${aliases.url}/v1/tools`, { headers: { authorization: `Bearer ${key}` } })).json()).tools.map(
      (tool: { name: string }) => tool.name,
    )

  it('a whole source does not reach the built-ins its aliases run', async () => {
    const written = await aliases.call('wr', { path: 'b.txt', content: 'x' }, { key: sourceScoped })
    expect(written.status).toBe(403)
    expect((await aliases.call('rd', { path: 'a.txt' }, { key: sourceScoped })).status).toBe(403)
    expect(await listed(sourceScoped)).not.toContain('wr')
    expect((await aliases.call('read_file', { path: 'b.txt' }, { key: admin })).status).toBe(404)
  })

  it('an alias is callable by a key that has its built-in, or that was given the alias by its id', async () => {
    const read = await aliases.call('rd', { path: 'a.txt' }, { key: readScoped })
    expect(read.status, JSON.stringify(read.body)).toBe(200)
    expect(read.body.content).toBe('alias')
    expect((await aliases.call('wr', { path: 'c.txt', content: 'x' }, { key: readScoped })).status).toBe(403)
    expect(await listed(readScoped)).toEqual(expect.arrayContaining(['read_file', 'rd']))
    expect((await aliases.call('rd', { path: 'a.txt' }, { key: aliasScoped })).status).toBe(200)
    expect((await aliases.call('wr', { path: 'c.txt', content: 'x' }, { key: aliasScoped })).status).toBe(403)
  })
})

describe("a tenant's budget of source tools (TOOLPORT_TENANT_SOURCE_TOOLS_MAX)", () => {
  const admin = 'budget-admin-key-0123456789'
  let budgeted: TestServer

  beforeAll(async () => {
    budgeted = await startTestServer(
      { TOOLPORT_TENANT_SOURCE_TOOLS_MAX: '3' },
      { fileKeys: [{ tenant: 'acme', key: admin, admin: true }] },
    )
  })
  afterAll(async () => {
    await budgeted?.stop()
  })

  const aliases = (id: string, names: string[]) => ({
    id,
    kind: 'alias',
    tools: names.map((name) => ({ name, tool: 'read_file' })),
  })

  it('refuses a source that would take the tenant past it with 413, stores nothing, and keeps the rest', async () => {
    expect((await putSource(budgeted, admin, aliases('one', ['r_one', 'r_two']))).status).toBe(201)
    const over = await putSource(budgeted, admin, aliases('two', ['r_three', 'r_four']))
    expect(over.status).toBe(413)
    expect(over.body).toMatchObject({ code: 'size_exceeded', field: 'tools' })
    expect(over.body.detail).toContain('would hold 4 tools, and 3 is the most allowed')
    const listed = await (
      await fetch(`${budgeted.url}/v1/sources`, { headers: { authorization: `Bearer ${admin}` } })
    ).json()
    expect(listed.sources.map((source: { id: string }) => source.id)).not.toContain('two')
    // Replacing a source counts its new tools instead of its old ones.
    expect((await putSource(budgeted, admin, aliases('one', ['r_one', 'r_two', 'r_three']))).status).toBe(200)
    await budgeted.call('write_file', { path: 'kept.txt', content: 'budget' }, { key: admin })
    const read = await budgeted.call('r_three', { path: 'kept.txt' }, { key: admin })
    expect(read.status, JSON.stringify(read.body)).toBe(200)
    expect(read.body.content).toBe('budget')
  })
})

describe("a tenant's source budget under concurrent PUTs", () => {
  const admin = 'race-admin-key-0123456789ab'
  let raced: TestServer

  beforeAll(async () => {
    raced = await startTestServer(
      { TOOLPORT_TENANT_SOURCE_TOOLS_MAX: '6', TOOLPORT_TENANT_SOURCES_MAX: '4' },
      { fileKeys: [{ tenant: 'acme', key: admin, admin: true }] },
    )
  })
  afterAll(async () => {
    await raced?.stop()
  })

  const wide = (id: string) => ({
    id,
    kind: 'alias',
    tools: ['a', 'b', 'c'].map((letter) => ({ name: `${id}_${letter}`, tool: 'read_file' })),
  })
  const narrow = (id: string) => ({ id, kind: 'alias', tools: [{ name: `${id}_only`, tool: 'read_file' }] })

  async function stored(): Promise<string[]> {
    const listed = await (
      await fetch(`${raced.url}/v1/sources`, { headers: { authorization: `Bearer ${admin}` } })
    ).json()
    return listed.sources.map((source: { id: string }) => source.id)
  }

  it('lets no more tools in than the budget when PUTs race, and refuses the rest with 413', async () => {
    // Eight sources of three tools each at once, against a budget of six tools: two fit.
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, index) => putSource(raced, admin, wide(`wide${index}`))),
    )
    const statuses = answers.map((answer) => answer.status).sort()
    expect(statuses).toEqual([201, 201, 413, 413, 413, 413, 413, 413])
    expect(await stored()).toHaveLength(2)
    // Removing one gives its tools back to the budget.
    const [first] = await stored()
    const removed = await fetch(`${raced.url}/v1/sources/${first}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${admin}` },
    })
    expect(removed.status).toBe(204)
    expect((await putSource(raced, admin, wide('again'))).status).toBe(201)
  })

  it('lets no more sources in than TOOLPORT_TENANT_SOURCES_MAX when PUTs race', async () => {
    for (const id of await stored()) {
      await fetch(`${raced.url}/v1/sources/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${admin}` } })
    }
    const answers = await Promise.all(
      Array.from({ length: 9 }, (_, index) => putSource(raced, admin, narrow(`small${index}`))),
    )
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(4)
    expect(answers.filter((answer) => answer.status === 413)).toHaveLength(5)
    expect(await stored()).toHaveLength(4)
  })
})
