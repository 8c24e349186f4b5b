import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  GetTaskResultSchema,
  LATEST_PROTOCOL_VERSION,
} from '@modelcontextprotocol/sdk/types.js'
import { Client as OldClient } from 'mcp-sdk-2025-03-26/client/index.js'
import { StreamableHTTPClientTransport as OldTransport } from 'mcp-sdk-2025-03-26/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestServer } from '../support/server'

// MCP by the book, checked with the SDK client at its current version and at a 2025-03-26-era one.

let server: TestServer

beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => {
  await server?.stop()
})

const post = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  })

const initialize = (version = LATEST_PROTOCOL_VERSION) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
})

describe('MCP transport and lifecycle', () => {
  it('answers 400 to an unsupported MCP-Protocol-Version, and an empty 202 to notifications', async () => {
    const unsupported = await post(
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { 'mcp-protocol-version': '1999-01-01' },
    )
    expect(unsupported.status).toBe(400)
    const notification = await post(
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { 'mcp-protocol-version': LATEST_PROTOCOL_VERSION },
    )
    expect(notification.status).toBe(202)
    expect(await notification.text()).toBe('')
  })

  it('advertises only what it delivers: no list_changed, tasks for tools/call', async () => {
    const answer = await (await post(initialize())).json()
    expect(answer.result.capabilities.tools).toEqual({ listChanged: false })
    expect(answer.result.capabilities.tasks).toEqual({ cancel: {}, requests: { tools: { call: {} } } })
    expect(answer.result.protocolVersion).toBe(LATEST_PROTOCOL_VERSION)
    const old = await (await post(initialize('2025-03-26'))).json()
    expect(old.result.protocolVersion).toBe('2025-03-26')
  })

  it('annotates truthfully: a call that may overwrite or delete is destructive, idempotence where it holds', async () => {
    const client = new Client({ name: 'conformance', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)))
    const { tools } = await client.listTools()
    const annotations = new Map(tools.map((tool) => [tool.name, tool.annotations]))
    expect(annotations.get('write_file')).toMatchObject({ readOnlyHint: false, destructiveHint: true })
    expect(annotations.get('pdf_generation')).toMatchObject({ destructiveHint: true })
    expect(annotations.get('delete_file')).toMatchObject({ destructiveHint: true, idempotentHint: true })
    expect(annotations.get('read_file')).toMatchObject({
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
    })
    expect(annotations.get('web_fetch')).toMatchObject({
      destructiveHint: false,
      openWorldHint: true,
      idempotentHint: true,
    })
    expect(annotations.get('http_fetch')).toMatchObject({ destructiveHint: true, openWorldHint: true })
    // Tools that can run as tasks say so, for clients of 2025-11-25.
    expect(tools.find((tool) => tool.name === 'execute_command')?.execution).toEqual({ taskSupport: 'optional' })
    await client.close()
  })
})

describe('MCP tasks (2025-11-25)', () => {
  it('runs a tools/call with `task` as a job: tasks/get follows it, tasks/result answers its result', async () => {
    const client = new Client({ name: 'tasks', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp?workspace=tasks`)))
    const created = await client.request(
      {
        method: 'tools/call',
        params: { name: 'write_file', arguments: { path: 'task.txt', content: 'from a task' }, task: { ttl: 60_000 } },
      },
      CreateTaskResultSchema,
    )
    expect(created.task.status).toBe('working')
    let task = created.task
    for (let attempt = 0; attempt < 50 && task.status === 'working'; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      task = await client.request({ method: 'tasks/get', params: { taskId: created.task.taskId } }, GetTaskResultSchema)
    }
    expect(task.status).toBe('completed')
    const result = await client.request(
      { method: 'tasks/result', params: { taskId: created.task.taskId } },
      CallToolResultSchema,
    )
    expect(result.structuredContent).toMatchObject({ path: 'task.txt', created: true })
    // The task is the job of the REST API.
    const job = await (await fetch(`${server.url}/v1/jobs/${created.task.taskId}`)).json()
    expect(job).toMatchObject({ status: 'succeeded', tool: 'write_file' })
    await expect(
      client.request({ method: 'tasks/get', params: { taskId: 'no-such-task-0000' } }, GetTaskResultSchema),
    ).rejects.toThrow()
    await client.close()
  })
})

describe('a 2025-03-26-era SDK client (1.12)', () => {
  it('lists and calls every tool without a schema error; files come as text links, not resource_link', async () => {
    const client = new OldClient({ name: 'old-client', version: '1.0.0' })
    await client.connect(new OldTransport(new URL(`${server.url}/mcp?workspace=old`)))
    const { tools } = await client.listTools()
    expect(tools.length).toBeGreaterThan(20)
    await server.call('write_file', { path: 'data.csv', content: 'a,b\n1,2\n' }, { workspace: 'old' })
    const inputs: Record<string, Record<string, unknown>> = {
      read_file: { path: 'data.csv' },
      write_file: { path: 'w.txt', content: 'x' },
      list_files: {},
      pdf_generation: { content: '# Old client', content_type: 'markdown' },
      office_document: { document_type: 'word', content: 'Old client' },
      excel_analyze: { path: 'data.csv' },
      system_info: {},
      get_job: { job_id: 'no-such-job-0000' },
    }
    for (const tool of tools) {
      // Every answer parses with the old SDK's own schemas: a result, or an error result (isError).
      const result = await client.callTool({ name: tool.name, arguments: inputs[tool.name] ?? {} })
      expect(Array.isArray(result.content), tool.name).toBe(true)
      if (tool.name in inputs && tool.name !== 'get_job')
        expect(result.isError, `${tool.name}: ${JSON.stringify(result.content)}`).toBeFalsy()
    }
    const pdf = await client.callTool({ name: 'pdf_generation', arguments: inputs.pdf_generation })
    const blocks = pdf.content as Array<{ type: string; text?: string }>
    expect(blocks.some((block) => block.type === 'resource_link')).toBe(false)
    expect(blocks.find((block) => block.text?.startsWith('Files (resources, with download links)'))?.text).toMatch(
      /\.pdf: toolport:\/\/workspace\/.+ \(download: http/,
    )
    await client.close()
  }, 120_000)
})

describe('MCP tasks a key may not have', () => {
  const guardedKey = 'tasks-guarded-key-0123456789'
  const readerKey = 'tasks-reader-key-0123456789'
  const approverKey = 'tasks-approver-key-0123456789'
  let gated: TestServer

  beforeAll(async () => {
    gated = await startTestServer(
      {},
      {
        fileKeys: [
          { tenant: 'acme', key: guardedKey, require_approval: ['write'] },
          { tenant: 'acme', key: readerKey, tools: ['read_file'] },
          { tenant: 'acme', key: approverKey, approver: true },
        ],
      },
    )
  })
  afterAll(async () => {
    await gated?.stop()
  })

  const connect = async (key: string) => {
    const client = new Client({ name: 'gated-tasks', version: '1.0.0' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gated.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    )
    return client
  }
  const taskCall = (client: Client) =>
    client.request(
      {
        method: 'tools/call',
        params: { name: 'write_file', arguments: { path: 'gated.txt', content: 'x' }, task: { ttl: 60_000 } },
      },
      CreateTaskResultSchema,
    )

  it('a gated call asked as a task is a protocol error naming why, and asks no approver', async () => {
    const client = await connect(guardedKey)
    const { tools } = await client.listTools()
    expect(tools.find((tool) => tool.name === 'write_file')?.execution?.taskSupport).toBe('forbidden')
    expect(tools.find((tool) => tool.name === 'read_file')?.execution?.taskSupport).toBe('optional')
    await expect(taskCall(client)).rejects.toThrow(/waits for an approver for this key, so it cannot run as a task/)
    await client.close()
    const inbox = await (
      await fetch(`${gated.url}/v1/approvals`, { headers: { authorization: `Bearer ${approverKey}` } })
    ).json()
    expect(inbox.approvals).toEqual([])
  })

  it('a task for a tool the key may not call is a protocol error with the permission problem', async () => {
    const client = await connect(readerKey)
    await expect(taskCall(client)).rejects.toThrow(/may not call write_file/)
    await client.close()
  })
})
