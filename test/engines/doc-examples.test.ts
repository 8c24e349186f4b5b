import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { type DocCommand, docCommands, outputsOf, scriptOf, serverEnvOf } from '../support/doc-examples'
import { startTestServer, type TestServer } from '../support/server'

// The shell examples of the README and of docs/tools.md run, in order, against a fresh server
// (started as the document says), and answer what the document shows under each of them.

const run = promisify(execFile)
const servers: TestServer[] = []

afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()))
})

async function check(document: string, commands: readonly DocCommand[], url: string): Promise<void> {
  const { stdout } = await run('bash', ['-c', scriptOf(commands, url)], {
    timeout: 150_000,
    maxBuffer: 16 * 1024 * 1024,
  })
  const outputs = outputsOf(stdout)
  for (const [index, entry] of commands.entries()) {
    if (entry.expected === undefined) continue
    const output = outputs[index] ?? ''
    let answer: unknown
    try {
      answer = JSON.parse(output)
    } catch {
      throw new Error(`${document}:${entry.line} did not answer JSON: ${output.slice(0, 300)}`)
    }
    expect(answer, `${document}:${entry.line} ${entry.command}`).toMatchObject(entry.expected as object)
  }
}

const documentUrl = (document: string) => new URL(`../../${document}`, import.meta.url)

describe('documented examples', () => {
  it('README.md: defines T and KEY once, first; every command runs and answers what it shows', async () => {
    const commands = docCommands(documentUrl('README.md'))
    expect(commands.length).toBeGreaterThan(3)
    expect(commands.filter((entry) => /^T=/.test(entry.command))).toHaveLength(1)
    expect(commands.findIndex((entry) => /^T=/.test(entry.command))).toBe(0)
    expect(commands.filter((entry) => /^KEY=/.test(entry.command))).toHaveLength(1)
    const server = await startTestServer(serverEnvOf(documentUrl('README.md')), { shell: true })
    servers.push(server)
    await check('README.md', commands, server.url)
  }, 180_000)

  it("docs/tools.md: uses the README's T and KEY; every command runs, in order, and answers what it shows", async () => {
    const commands = docCommands(documentUrl('docs/tools.md'))
    // One example per tool at least, most of them with the answer they give.
    expect(commands.length).toBeGreaterThan(20)
    expect(commands.filter((entry) => entry.expected !== undefined).length).toBeGreaterThan(15)
    expect(commands.some((entry) => /^(T|KEY)=/.test(entry.command))).toBe(false)
    const env = serverEnvOf(documentUrl('docs/tools.md'))
    expect(env).toMatchObject({ TOOLPORT_ENV_ALLOW: 'REGION' })
    const server = await startTestServer(env, { shell: true })
    servers.push(server)
    await check('docs/tools.md', [{ command: 'T=', line: 0 }, { command: 'KEY=', line: 0 }, ...commands], server.url)
  }, 180_000)
})
