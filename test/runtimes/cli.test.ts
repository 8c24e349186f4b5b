import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createApp } from '../../src/app'
import { createAuditLog } from '../../src/audit/audit-log'
import type { CliIo } from '../../src/cli/call'
import { runCli } from '../../src/cli/run'
import { createTarget } from '../../src/cli/target'
import { loadConfig } from '../../src/config/config'
import { silentLogger } from '../../src/core/logger'
import { createMemoryStorage } from '../../src/storage/memory'
import { toolNames } from '../../src/tools/builtins'
import { defineTool } from '../../src/tools/tool'
import { startTestServer, type TestServer } from '../support/server'

const key = 'cli-test-key-0123456789'

function capture(env: Record<string, string | undefined> = {}, stdin = '') {
  const output = { stdout: '', stderr: '' }
  const io: CliIo = {
    stdout: (text) => {
      output.stdout += text
    },
    stderr: (text) => {
      output.stderr += text
    },
    env,
    readStdin: async () => stdin,
  }
  return { io, output }
}

// In-process mode over a memory store: the same app the CLI builds, without touching the disk.
const storage = createMemoryStorage()
const localApp = createApp({ config: loadConfig({}, { toolNames }), storage, log: silentLogger }).app
const deps = {
  local: async () =>
    createTarget('http://127.0.0.1:8787', async (url, init) => localApp.request(url, init), undefined, fetch),
  serve: async () => {},
  audit: async () => createAuditLog({ storage, log: silentLogger, retentionDays: 0 }),
}

describe('toolport call, in process', () => {
  it('runs a tool from --param flags and prints its JSON result', async () => {
    const { io, output } = capture()
    const code = await runCli(['call', 'write_file', '--path', 'ci/report.md', '--content', '# ok\n'], io, deps)
    expect(code).toBe(0)
    expect(JSON.parse(output.stdout)).toMatchObject({ path: 'ci/report.md', created: true })
    const read = capture()
    expect(
      await runCli(['call', 'read_file', '--input', '{"path":"ci/report.md"}', '--end-line', '1'], read.io, deps),
    ).toBe(0)
    expect(JSON.parse(read.output.stdout)).toMatchObject({ content: '# ok\n', end_line: 1 })
  })

  it('reads --input-file - from standard input', async () => {
    const { io, output } = capture({}, '{"path":"ci/report.md"}')
    expect(await runCli(['call', 'read_file', '--input-file', '-'], io, deps)).toBe(0)
    expect(JSON.parse(output.stdout).content).toBe('# ok\n')
  })

  it('exits 1 with the problem on stderr when the tool fails, 2 on wrong usage', async () => {
    const failed = capture()
    expect(await runCli(['call', 'read_file', '--path', 'missing.txt'], failed.io, deps)).toBe(1)
    expect(failed.output.stdout).toBe('')
    expect(JSON.parse(failed.output.stderr)).toMatchObject({ code: 'not_found', status: 404 })
    for (const argv of [
      ['call'],
      ['call', 'read_file', '--nope', '1'],
      ['call', 'no_such_tool', '--x', '1'],
      ['frobnicate'],
      [],
    ]) {
      const usage = capture()
      expect(await runCli(argv, usage.io, deps), argv.join(' ')).toBe(2)
    }
    const help = capture()
    expect(await runCli(['call', 'list_files', '--help'], help.io, deps)).toBe(0)
    expect(help.output.stdout).toContain('--recursive (boolean, optional)')
  })
})

describe('toolport call --url', () => {
  let server: TestServer
  let base = ''
  const makeReport = defineTool({
    name: 'make_report',
    title: 'Make report',
    description: 'Makes a file (a stand-in for the document tools).',
    effect: 'write',
    input: z.object({ title: z.string() }),
    output: z.object({ files: z.array(z.object({ url: z.string(), name: z.string() })) }),
    // The "file" is the service's own health document: any URL the service hands out will do.
    run: async () => ({ files: [{ url: `${base}/healthz`, name: '../../escape/health.json' }] }),
  })
  let out: string

  beforeAll(async () => {
    server = await startTestServer({ TOOLPORT_API_KEYS: key }, { tools: [makeReport] })
    base = server.url
    out = await mkdtemp(join(tmpdir(), 'toolport-cli-'))
  })
  afterAll(async () => {
    await server.stop()
    await rm(out, { recursive: true, force: true })
  })

  it('calls a running service with --key, and writes the files it makes into --out', async () => {
    const { io, output } = capture({ TOOLPORT_KEY: key })
    const code = await runCli(['call', 'make_report', '--url', server.url, '--title', 'Q3', '--out', out], io, deps)
    expect(code, output.stderr).toBe(0)
    expect(JSON.parse(output.stdout).files).toHaveLength(1)
    expect(JSON.parse(await readFile(join(out, 'health.json'), 'utf8'))).toEqual({ status: 'ok' })
    expect(output.stderr).toContain(`wrote ${join(out, 'health.json')}`)
  })

  it('exits 1 with the 401 problem when the key is wrong', async () => {
    const { io, output } = capture()
    const code = await runCli(
      ['call', 'make_report', '--url', server.url, '--key', 'wrong-key-0123456789', '--input', '{"title":"x"}'],
      io,
      deps,
    )
    expect(code).toBe(1)
    expect(JSON.parse(output.stderr)).toMatchObject({ code: 'unauthenticated', status: 401 })
  })
})

describe('the toolport command', () => {
  it('runs in process from the real entry point, with the exit status of the call', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'toolport-cli-data-'))
    const run = (args: string[]) =>
      promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
        env: { ...process.env, TOOLPORT_DATA_DIR: dataDir, TOOLPORT_WORK_DIR: join(dataDir, 'work') },
      })
    try {
      const written = await run(['call', 'write_file', '--path', 'a.txt', '--content', 'hi'])
      expect(JSON.parse(written.stdout)).toMatchObject({ path: 'a.txt', created: true })
      const failure = await run(['call', 'read_file', '--path', 'b.txt']).catch(
        (error: { code: number; stderr: string }) => error,
      )
      expect(failure).toMatchObject({ code: 1 })
      expect(JSON.parse((failure as { stderr: string }).stderr)).toMatchObject({ code: 'not_found' })
    } finally {
      await rm(dataDir, { recursive: true, force: true })
    }
  })
})
