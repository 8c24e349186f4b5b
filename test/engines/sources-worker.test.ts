import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import ExcelJS from 'exceljs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { workspaceKeys } from '../../src/storage/layout'
import { startLocalWeb } from '../support/local-web'
import { startTestServer, type TestServer } from '../support/server'
import { bundleFixtureInto } from '../support/stdio-fixture'

// Reference 002's plugins as their authors write them, dropped into TOOLPORT_SOURCES_DIR: a folder
// with manifest.json (aiTools + rpc.methods) and the worker beside it, a local process spoken to with
// JSON-RPC over stdio, run in the sandbox (test/fixtures/plugin-worker.ts, a real ExcelJS worker).

const key = 'worker-src-key-0123456789'
let server: TestServer
let folder: string
let workerCode: string

// The worked example's manifest, verbatim from the reference.
const excelManifest = {
  rpc: {
    methods: {
      excel_analyze: {
        description: 'Analyze an Excel file and return sheets and headers.',
        inputSchema: {
          type: 'object',
          properties: {
            filePath: { type: 'string', description: 'Resolved path of a granted FengYu FileRef.' },
          },
          required: ['filePath'],
        },
        outputSchema: {
          type: 'object',
          properties: {
            success: { type: 'boolean' },
            summary: { type: 'string' },
            sheets: { type: 'array', items: { type: 'string' } },
          },
          required: ['success', 'summary'],
        },
      },
    },
  },
  aiTools: [
    {
      name: 'excel_analyze',
      method: 'excel_analyze',
      effect: 'read',
      description: 'Analyze an Excel file and return sheets and headers.',
    },
  ],
}

const echoMethod = { inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }

/** A plugin folder: its manifest and the bundled worker. */
async function dropPlugin(name: string, manifest: unknown): Promise<void> {
  const plugin = join(folder, name)
  await mkdir(plugin, { recursive: true })
  await writeFile(join(plugin, 'worker.mjs'), workerCode)
  await chmod(plugin, 0o755)
  await chmod(join(plugin, 'worker.mjs'), 0o644)
  await writeFile(join(plugin, 'manifest.json'), JSON.stringify(manifest, null, 2))
}

async function putWorkbook(path: string, sheets: Record<string, string[]>): Promise<void> {
  const workbook = new ExcelJS.Workbook()
  for (const [name, headers] of Object.entries(sheets)) workbook.addWorksheet(name).addRow(headers)
  const bytes = new Uint8Array(await workbook.xlsx.writeBuffer())
  await server.storage.put(`${workspaceKeys.root('acme', 'default')}${path}`, bytes)
}

// biome-ignore lint/suspicious/noExplicitAny: tests inspect arbitrary JSON
async function sources(): Promise<any[]> {
  const response = await fetch(`${server.url}/v1/sources`, { headers: { authorization: `Bearer ${adminKey}` } })
  return ((await response.json()) as { sources: unknown[] }).sources as never
}

const adminKey = 'worker-src-admin-0123456789'

async function waitFor<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 30_000
  for (;;) {
    const found = await probe()
    if (found !== undefined) return found
    if (Date.now() > deadline) throw new Error(`never: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'toolport-plugins-'))
  await chmod(folder, 0o755)
  const build = await mkdtemp(join(tmpdir(), 'toolport-plugin-build-'))
  await bundleFixtureInto('plugin-worker.ts', build, 'worker.mjs')
  workerCode = await (await import('node:fs/promises')).readFile(join(build, 'worker.mjs'), 'utf8')
  await rm(build, { recursive: true, force: true })
  await dropPlugin('fan.summer.excel', excelManifest)
  await dropPlugin('no-ai', { rpc: { methods: { render: echoMethod } }, aiTools: [] })
  await dropPlugin('toys', {
    rpc: {
      methods: {
        echo: echoMethod,
        crash: echoMethod,
        sleep: { inputSchema: { type: 'object', properties: { ms: { type: 'integer' } } } },
        network: { inputSchema: { type: 'object', properties: { url: { type: 'string' } } } },
        fail: echoMethod,
        garbage: echoMethod,
      },
    },
    aiTools: ['echo', 'crash', 'sleep', 'network', 'fail', 'garbage'].map((name) => ({
      name: `toy_${name}`,
      method: name,
      effect: 'read',
      description: `The worker's ${name} method.`,
    })),
    timeout_seconds: 3,
    idle_seconds: 5,
  })
  server = await startTestServer(
    { TOOLPORT_API_KEYS: `acme=${key}`, TOOLPORT_SOURCES_DIR: folder },
    { shell: true, fileKeys: [{ tenant: 'acme', key: adminKey, admin: true }] },
  )
}, 120_000)
afterAll(async () => {
  await server?.stop()
  await rm(folder, { recursive: true, force: true })
})

describe('a reference plugin dropped in as a folder', () => {
  it('loads as written: id from the folder, a worker source, its clashing tool namespaced', async () => {
    const plugin = await waitFor(
      async () => (await sources()).find((source) => source.id === 'fan-summer-excel' && source.status === 'ready'),
      'the plugin ready',
    )
    expect(plugin).toMatchObject({
      kind: 'worker',
      owner: 'operator',
      enabled: true,
      supports_ai: true,
      tools: ['fan_summer_excel_excel_analyze'],
    })
    expect(plugin.reason).toContain('excel_analyze is served as fan_summer_excel_excel_analyze')
    const listed = await fetch(`${server.url}/v1/tools`, { headers: { authorization: `Bearer ${key}` } })
    const tools = ((await listed.json()) as { tools: Array<{ id: string; name: string; effect: string }> }).tools
    // The built-in keeps its name; the plugin's tool has its own, and its id names the plugin.
    expect(tools.find((tool) => tool.name === 'excel_analyze')?.id).toBe('builtin:excel_analyze')
    expect(tools.find((tool) => tool.name === 'fan_summer_excel_excel_analyze')).toMatchObject({
      id: 'fan-summer-excel:excel_analyze',
      effect: 'read',
    })
  })

  it('runs the worked example end to end: the workspace file reaches the worker as a resolved path', async () => {
    await putWorkbook('data/q3.xlsx', { Revenue: ['Region', 'Amount'], Costs: ['Item', 'Cost'] })
    const analyzed = await server.call('fan_summer_excel_excel_analyze', { filePath: 'data/q3.xlsx' }, { key })
    expect(analyzed.status, JSON.stringify(analyzed.body)).toBe(200)
    expect(analyzed.body).toEqual({
      success: true,
      summary: '2 sheets. Revenue: Region, Amount; Costs: Item, Cost',
      sheets: ['Revenue', 'Costs'],
    })
    // A path out of the workspace, or a file that is not there, never reaches the worker.
    expect(
      (await server.call('fan_summer_excel_excel_analyze', { filePath: '../../etc/passwd' }, { key })).status,
    ).toBe(400)
    expect((await server.call('fan_summer_excel_excel_analyze', { filePath: 'data/none.xlsx' }, { key })).status).toBe(
      404,
    )
    const missing = await server.call('fan_summer_excel_excel_analyze', {}, { key })
    expect(missing.status).toBe(400)
    expect(missing.body.field).toBe('filePath')
  })

  it('takes a plugin with no AI tools as a valid source that offers none', async () => {
    const plugin = await waitFor(
      async () => (await sources()).find((source) => source.id === 'no-ai' && source.status === 'ready'),
      'the plugin without tools ready',
    )
    expect(plugin).toMatchObject({ kind: 'worker', supports_ai: false, tools: [] })
  })
})

describe('the worker process', () => {
  it('answers calls, keeps running between them, and is started again after it crashes', async () => {
    const first = await server.call('toy_echo', { text: 'one' }, { key })
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    const second = await server.call('toy_echo', { text: 'two' }, { key })
    // Kept warm: the same process answered both.
    expect(second.body.instance).toBe(first.body.instance)
    expect(second.body.params).toEqual({ text: 'two' })
    const crashed = await server.call('toy_crash', {}, { key })
    expect(crashed.status).toBe(502)
    expect(crashed.body.detail).toContain('the worker crashes on purpose')
    const status = (await sources()).find((source) => source.id === 'toys')
    expect(status.reason).toContain('the worker crashes on purpose')
    const again = await server.call('toy_echo', { text: 'three' }, { key })
    expect(again.status).toBe(200)
    expect(again.body.instance).not.toBe(first.body.instance)
  })

  it("passes a worker's error on, ends a call at the source's timeout, and drops a worker that breaks the protocol", async () => {
    const failed = await server.call('toy_fail', {}, { key })
    expect(failed.status).toBe(502)
    expect(failed.body.detail).toContain('the sheet is locked')
    const slow = await server.call('toy_sleep', { ms: 60_000 }, { key })
    expect(slow.status).toBe(504)
    const broken = await server.call('toy_garbage', {}, { key })
    expect(broken.status).toBe(502)
    expect(broken.body.detail).toContain('not JSON-RPC')
    expect((await server.call('toy_echo', { text: 'after' }, { key })).status).toBe(200)
  })

  it('has no network unless egress opens it', async () => {
    const web = await startLocalWeb({ '/': (_request, response) => response.end('here') })
    try {
      const reached = await server.call('toy_network', { url: web.url }, { key })
      expect(reached.status).toBe(200)
      expect(reached.body.reached).toBe(false)
      expect(web.hits).toEqual([])
    } finally {
      await web.stop()
    }
  })

  it('stops a worker idle past idle_seconds and starts it again for the next call', async () => {
    const before = await server.call('toy_echo', { text: 'before' }, { key })
    await new Promise((resolve) => setTimeout(resolve, 6_500))
    const after = await server.call('toy_echo', { text: 'after' }, { key })
    expect(after.status).toBe(200)
    expect(after.body.instance).not.toBe(before.body.instance)
  })
})
