import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestServer } from '../support/server'

// Clients generated from the committed openapi/openapi.json by the two common generators compile
// under strict TypeScript, narrow a result without casts, and call three tools of a real server.

const run = promisify(execFile)
const root = new URL('../../', import.meta.url).pathname
const bin = (name: string) => join(root, 'node_modules/.bin', name)

let server: TestServer
let folder: string

beforeAll(async () => {
  server = await startTestServer()
  folder = await mkdtemp(join(root, '.typed-clients-'))
})
afterAll(async () => {
  await server?.stop()
  if (folder) await rm(folder, { recursive: true, force: true })
})

// A 200 is the tool's result; a 202 a job or a pending approval: told apart by their fields, no cast.
const openapiFetchProgram = `
import createClient from 'openapi-fetch'
import type { paths } from './schema'

const client = createClient<paths>({ baseUrl: process.env.BASE_URL })
const workspace = 'typed-openapi-fetch'
const written = await client.POST('/v1/tools/write_file', {
  params: { query: { workspace, async: false } },
  body: { path: 'notes/a.md', content: '# typed\\n' },
})
if (written.error) throw new Error(written.error.hint)
if ('job_id' in written.data || 'approval_id' in written.data || 'dry_run' in written.data) throw new Error('not a result')
const path: string = written.data.path
const read = await client.POST('/v1/tools/read_file', { params: { query: { workspace } }, body: { path } })
if (read.error) throw new Error(read.error.hint)
if (!('content' in read.data)) throw new Error('not a result')
const content: string = read.data.content
const listed = await client.POST('/v1/tools/list_files', { params: { query: { workspace } }, body: { path: 'notes' } })
if (listed.error) throw new Error(listed.error.hint)
if (!('entries' in listed.data)) throw new Error('not a result')
const missing = await client.POST('/v1/tools/read_file', { params: { query: { workspace } }, body: { path: 'nope.md' } })
const code: string | undefined = missing.error?.code
console.log(JSON.stringify({ path, content, entries: listed.data.entries.map((entry) => entry.path), code }))
`

const heyApiProgram = `
import { client } from './hey/client.gen'
import { listFiles, readFile, writeFile } from './hey/sdk.gen'

client.setConfig({ baseUrl: process.env.BASE_URL })
const query = { workspace: 'typed-hey-api' }
const written = await writeFile({ query, body: { path: 'b.txt', content: 'hey' } })
if (written.error) throw new Error(written.error.hint)
if (!written.data || 'job_id' in written.data || 'approval_id' in written.data || 'dry_run' in written.data) throw new Error('not a result')
const path: string = written.data.path
const read = await readFile({ query, body: { path } })
if (!read.data || !('content' in read.data)) throw new Error('not a result')
const content: string = read.data.content
const listed = await listFiles({ query, body: {} })
if (!listed.data || !('entries' in listed.data)) throw new Error('not a result')
const missing = await readFile({ query, body: { path: 'nope.txt' } })
const code: string | undefined = missing.error?.code
console.log(JSON.stringify({ path, content, entries: listed.data.entries.map((entry) => entry.path), code }))
`

const tsconfig = {
  compilerOptions: {
    target: 'ES2022',
    module: 'ESNext',
    moduleResolution: 'Bundler',
    strict: true,
    noUncheckedIndexedAccess: true,
    skipLibCheck: true,
    noEmit: true,
    lib: ['ES2022', 'DOM'],
    types: ['node'],
  },
  include: ['*.ts', 'hey/**/*.ts'],
}

describe('typed clients generated from openapi/openapi.json', () => {
  it('openapi-typescript + openapi-fetch and @hey-api/openapi-ts compile strictly and call three tools', async () => {
    const document = join(root, 'openapi/openapi.json')
    await run(bin('openapi-typescript'), [document, '-o', join(folder, 'schema.d.ts')], { cwd: folder })
    await run(bin('openapi-ts'), ['-i', document, '-o', join(folder, 'hey')], { cwd: folder })
    await writeFile(join(folder, 'openapi-fetch.ts'), openapiFetchProgram)
    await writeFile(join(folder, 'hey-api.ts'), heyApiProgram)
    await writeFile(join(folder, 'tsconfig.json'), JSON.stringify(tsconfig))
    // Strict type-check: a wrongly typed field (data.path, a boolean flag) fails here.
    await run(bin('tsc'), ['-p', folder], { cwd: folder }).catch((error: { stdout?: string }) => {
      throw new Error(`tsc: ${error.stdout}`)
    })
    for (const program of ['openapi-fetch.ts', 'hey-api.ts']) {
      const { stdout } = await run(bin('tsx'), [join(folder, program)], {
        cwd: folder,
        env: { ...process.env, BASE_URL: server.url },
      })
      const result = JSON.parse(stdout.trim().split('\n').at(-1) as string)
      expect(result.code, program).toBe('not_found')
      expect(result.entries.length, program).toBeGreaterThan(0)
      expect(result.content.length, program).toBeGreaterThan(0)
    }
  }, 180_000)
})
