import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { watchListening } from '../support/listening'

// The built Node service loads each tool's packages on the tool's first call (scripts/build-targets.mjs
// splits dist/ at every dynamic import). A preload hook (test/support/module-log.mjs) logs every package
// file the service process and its worker threads load, so the test sees what really loaded, and when.
const root = new URL('../..', import.meta.url).pathname
const key = 'lazy-load-test-key-0123456789abcdef'
const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }

/** Packages only some tools need: none may load before a call of such a tool. */
const engines = [
  'docx',
  'pptxgenjs',
  'exceljs',
  'jszip',
  'fflate',
  'pdf-lib',
  '@pdf-lib/fontkit',
  'marked',
  'puppeteer-core',
  '@sparticuz/chromium',
  'mvdan-sh',
  '@modelcontextprotocol/sdk',
  '@mozilla/readability',
  'linkedom',
  'turndown',
  'htmlparser2',
  'yaml',
  '@aws-sdk/client-s3',
  '@aws-sdk/lib-storage',
  '@aws-sdk/client-lambda',
  '@aws-sdk/client-ssm',
  '@aws-sdk/client-secrets-manager',
  // Only bearer tokens (OAuth) need jose, and only documents that embed an image need image-size.
  'jose',
  'image-size',
]

let folder: string
let logFile: string
let child: ChildProcess
let url: string

/** The packages (node_modules/<name>) the service has loaded so far. */
async function loadedPackages(): Promise<Set<string>> {
  const log = await readFile(logFile, 'utf8').catch(() => '')
  const names = [...log.matchAll(/\/node_modules\/((?:@[^/]+\/)?[^/]+)\//g)].map((match) => match[1] as string)
  return new Set(names)
}

const loadedEngines = async () => {
  const loaded = await loadedPackages()
  return engines.filter((name) => loaded.has(name))
}

async function call(tool: string, input: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${url}/v1/tools/${tool}?workspace=lazy`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify(input),
  })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'toolport-lazy-'))
  logFile = join(folder, 'modules.log')
  await promisify(execFile)(process.execPath, ['scripts/build.mjs', 'node'], { cwd: root })
  child = spawn(process.execPath, ['--import', './test/support/module-log.mjs', 'dist/node.js'], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      PORT: '0',
      MODULE_LOG_FILE: logFile,
      TOOLPORT_API_KEYS: `test=${key}`,
      TOOLPORT_DATA_DIR: join(folder, 'data'),
      TOOLPORT_WORK_DIR: join(folder, 'work'),
      // No sandbox is needed to serve files: the shell parser must stay unloaded whichever executor runs.
      TOOLPORT_SANDBOX: 'none',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  url = await watchListening(child, { drain: true }).url
})

afterAll(async () => {
  // The service writes its last usage totals as it shuts down: the folder goes once it has exited.
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    await exited
  }
  await rm(folder, { recursive: true, force: true })
})

describe('the built Node service loads tools on first use', () => {
  it('starts and serves file tools without loading any tool engine', async () => {
    // The hook works: the service's own packages are in the log.
    const loaded = await loadedPackages()
    expect(loaded.has('hono')).toBe(true)
    expect(loaded.has('zod')).toBe(true)
    expect(await loadedEngines()).toEqual([])
    expect((await call('write_file', { path: 'notes/a.md', content: '# Notes\n\nhello\n' })).status).toBe(200)
    const read = await call('read_file', { path: 'notes/a.md' })
    expect(read.status).toBe(200)
    expect(read.body.content).toContain('hello')
    expect((await call('list_files', { path: 'notes' })).status).toBe(200)
    expect(
      (await call('multi_edit', { path: 'notes/a.md', edits: [{ old_text: 'hello', new_text: 'hi' }] })).status,
    ).toBe(200)
    expect(await loadedEngines()).toEqual([])
  })

  it('describes every tool (OpenAPI, catalog formats) without loading the engines', async () => {
    const openapi = await fetch(`${url}/openapi.json`, { headers: auth })
    expect(openapi.status).toBe(200)
    const document = (await openapi.json()) as { paths: Record<string, unknown> }
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(['/v1/tools/pdf_generation', '/v1/tools/office_document', '/v1/tools/execute_command']),
    )
    for (const format of ['openai', 'anthropic', 'gemini', 'mcp']) {
      const catalog = await fetch(`${url}/v1/tools?format=${format}`, { headers: auth })
      expect(catalog.status).toBe(200)
      expect(JSON.stringify(await catalog.json())).toContain('office_document')
    }
    expect(await loadedEngines()).toEqual([])
  })

  it('lists tools over MCP loading the MCP SDK and no engine', async () => {
    const client = new Client({ name: 'lazy-load-test', version: '1.0.0' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${url}/mcp?workspace=lazy`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    )
    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['pdf_generation', 'office_document']))
    await client.close()
    expect(await loadedEngines()).toEqual(['@modelcontextprotocol/sdk'])
  })

  it('loads pdf-lib with the first pdf_generation, and the PDF is real', async () => {
    const made = await call('pdf_generation', {
      content: 'hello from a lazily loaded pdf-lib',
      content_type: 'text',
      output_path: 'out/hello.pdf',
    })
    expect(made.status, JSON.stringify(made.body)).toBe(200)
    expect(made.body).toMatchObject({ pages: 1, renderer: 'pdf-lib' })
    const [file] = made.body.files as { url: string }[]
    const bytes = new Uint8Array(await (await fetch((file as { url: string }).url)).arrayBuffer())
    expect(new TextDecoder().decode(bytes.subarray(0, 5))).toBe('%PDF-')
    const loaded = await loadedEngines()
    expect(loaded).toEqual(expect.arrayContaining(['pdf-lib', '@pdf-lib/fontkit']))
    expect(loaded).not.toContain('docx')
  })

  it('loads docx and marked with the first Word document, and still no browser', async () => {
    const made = await call('office_document', {
      document_type: 'word',
      title: 'Lazy',
      content: '# Lazy\n\nloaded on **first** use',
      output_path: 'out/lazy.docx',
    })
    expect(made.status, JSON.stringify(made.body)).toBe(200)
    const [file] = made.body.files as { url: string }[]
    const bytes = new Uint8Array(await (await fetch((file as { url: string }).url)).arrayBuffer())
    // A .docx is a zip archive.
    expect([bytes[0], bytes[1]]).toEqual([0x50, 0x4b])
    const loaded = await loadedEngines()
    expect(loaded).toEqual(expect.arrayContaining(['docx', 'marked']))
    for (const name of ['pptxgenjs', 'exceljs', 'puppeteer-core', '@sparticuz/chromium', 'linkedom', 'mvdan-sh']) {
      expect(loaded).not.toContain(name)
    }
  })
})
