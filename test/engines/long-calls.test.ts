import { readFile } from 'node:fs/promises'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestServer } from '../support/server'

// A 90-second command completes end to end through every kind of client: a function-calling loop on
// REST (the model's turns replayed from a recorded transcript), the MCP SDK client with its default
// options (60 s request timeout, no progress), and one that resets its timeout on progress. The three
// run at once: the synchronous limit is the default 40 s.

let server: TestServer
const command = 'sleep 90; echo build done'

beforeAll(async () => {
  server = await startTestServer({ TOOLPORT_SHELL_CONCURRENCY: '4' }, { shell: true })
}, 60_000)
afterAll(async () => {
  await server?.stop()
})

interface ToolCall {
  id: string
  function: { name: string; arguments: string }
}
interface Turn {
  role: 'assistant'
  content: string | null
  tool_calls?: ToolCall[]
}

/** The function-calling loop of docs/platforms.md, with the model's turns from a recorded transcript. */
async function replayOpenAiLoop(): Promise<string[]> {
  const transcript = JSON.parse(
    await readFile(new URL('../fixtures/transcripts/openai-long-call.json', import.meta.url), 'utf8'),
  ) as { turns: Turn[] }
  const { tools } = await (await fetch(`${server.url}/v1/tools?format=openai`)).json()
  const offered = new Set(tools.map((tool: { function: { name: string } }) => tool.function.name))
  const toolMessages: string[] = []
  let jobId = ''
  let finished = false
  for (const turn of transcript.turns) {
    if (!turn.tool_calls) break
    // A model that has read "succeeded" stops polling: the recording's later polls are skipped.
    if (finished) continue
    for (const call of turn.tool_calls) {
      // Every tool the model calls was offered to it in the tools of ?format=openai.
      expect(offered.has(call.function.name), call.function.name).toBe(true)
      const answer = await fetch(`${server.url}/v1/tools/${call.function.name}?workspace=long-rest`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: call.function.arguments.replaceAll('$job_id', jobId),
      })
      const content = await answer.text()
      toolMessages.push(content)
      const parsed = JSON.parse(content)
      jobId = parsed.job_id ?? jobId
      finished = parsed.status === 'succeeded' || parsed.exit_code !== undefined
    }
  }
  return toolMessages
}

// Each client in a workspace of its own: commands on one workspace run one after another.
async function mcpClient(workspace: string): Promise<Client> {
  const client = new Client({ name: 'long-calls', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp?workspace=${workspace}`)))
  return client
}

type Text = { type: string; text: string }

describe('a 90-second call', () => {
  it('completes through REST function calling, the MCP SDK with default options, and one with progress', async () => {
    const [rest, defaults, progress] = await Promise.all([
      replayOpenAiLoop(),
      (async () => {
        const client = await mcpClient('long-mcp')
        try {
          const first = await client.callTool({
            name: 'execute_command',
            arguments: { command, timeout_seconds: 150 },
          })
          // Handed over at the synchronous limit, before the SDK's 60 s timeout: the text says what to call.
          const text = (first.content as Text[]).map((block) => block.text).join('\n')
          const jobId = /job ([A-Za-z0-9-]{8,64})/.exec(text)?.[1] as string
          expect(text).toContain('was not stopped')
          let job = { status: 'running', result: undefined as unknown }
          for (let attempt = 0; attempt < 5 && job.status !== 'succeeded'; attempt++) {
            const polled = await client.callTool({ name: 'get_job', arguments: { job_id: jobId, wait_seconds: 50 } })
            job = polled.structuredContent as typeof job
          }
          return { first, job }
        } finally {
          await client.close()
        }
      })(),
      (async () => {
        const client = await mcpClient('long-progress')
        const notes: string[] = []
        try {
          const result = await client.callTool(
            { name: 'execute_command', arguments: { command, timeout_seconds: 150 } },
            undefined,
            { onprogress: (note) => notes.push(note.message ?? ''), resetTimeoutOnProgress: true },
          )
          return { result, notes }
        } finally {
          await client.close()
        }
      })(),
    ])
    // REST: a 202 whose hint names get_job, then get_job until the output.
    const started = JSON.parse(rest[0] as string)
    expect(started).toMatchObject({ status: 'running', tool: 'execute_command' })
    expect(started.hint).toContain('get_job')
    const done = JSON.parse(rest.at(-1) as string)
    expect(done).toMatchObject({ status: 'succeeded', result: { exit_code: 0, stdout: 'build done\n' } })
    // MCP with the SDK's defaults: handed over, then collected with get_job.
    expect(defaults.first.isError).toBe(true)
    expect(defaults.job).toMatchObject({ status: 'succeeded', result: { exit_code: 0, stdout: 'build done\n' } })
    // MCP with progress: the request stayed open for the whole call.
    expect(progress.result.structuredContent).toMatchObject({ exit_code: 0, stdout: 'build done\n' })
    expect(progress.notes.length).toBeGreaterThanOrEqual(10)
  }, 240_000)
})
