import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { docCommands, outputsOf, scriptOf } from '../support/doc-examples'
import { startTestServer, type TestServer } from '../support/server'

// The shell examples of the README run, in order, against a fresh server, and answer what the
// README shows under each of them.

const run = promisify(execFile)
let server: TestServer

beforeAll(async () => {
  server = await startTestServer({}, { shell: true })
}, 60_000)
afterAll(async () => {
  await server?.stop()
})

describe('documented examples', () => {
  it.each(['README.md'])(
    '%s: every command runs and answers what the document shows',
    async (document) => {
      const commands = docCommands(new URL(`../../${document}`, import.meta.url))
      expect(commands.length).toBeGreaterThan(3)
      // One definition of T and KEY for the whole document, before any call.
      expect(commands.filter((entry) => /^T=/.test(entry.command)).map((entry) => entry.line)).toHaveLength(1)
      expect(commands.findIndex((entry) => /^T=/.test(entry.command))).toBe(0)
      const { stdout } = await run('bash', ['-c', scriptOf(commands, server.url)], {
        timeout: 120_000,
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
    },
    180_000,
  )
})
