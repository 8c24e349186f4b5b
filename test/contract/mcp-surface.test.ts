import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestServer } from '../support/server'

// MCP beyond tools: the workspace as resources (list, read, templates, completion), the context as a
// prompt, and resource links a tool returns read back through resources/read, with read_file's checks.

const fullKey = 'surface-full-0123456789abcdef'
const writerKey = 'surface-writer-0123456789abcd'
const gatedKey = 'surface-gated-0123456789abcde'
const otherKey = 'surface-other-0123456789abcde'
let server: TestServer

beforeAll(async () => {
  server = await startTestServer(
    {},
    {
      fileKeys: [
        { tenant: 'acme', key: fullKey },
        // May write but neither list nor read: no file names and no contents through MCP either.
        { tenant: 'acme', key: writerKey, tools: ['write_file'] },
        { tenant: 'acme', key: gatedKey, require_approval: ['read'] },
        { tenant: 'globex', key: otherKey },
      ],
    },
  )
  const write = (path: string, content: string) =>
    fetch(`${server.url}/v1/tools/write_file`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fullKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ path, content }),
    })
  expect((await write('notes/todo.md', '# Todo\n- ship\n')).status).toBe(200)
  expect((await write('notes/data.json', '{"a":1}')).status).toBe(200)
})
afterAll(async () => {
  await server?.stop()
})

async function connect(key: string, workspace?: string): Promise<Client> {
  const client = new Client({ name: 'surface-test', version: '1.0.0' })
  const url = new URL(`${server.url}/mcp`)
  if (workspace) url.searchParams.set('workspace', workspace)
  await client.connect(
    new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
  )
  return client
}

describe('the workspace as MCP resources', () => {
  it('declares resources with subscriptions, prompts, completions and logging, and no list changes', async () => {
    const client = await connect(fullKey)
    const capabilities = client.getServerCapabilities()
    expect(capabilities?.resources).toEqual({ subscribe: true, listChanged: false })
    expect(capabilities?.prompts).toEqual({ listChanged: false })
    expect(capabilities?.completions).toEqual({})
    expect(capabilities?.logging).toEqual({})
    await client.close()
  })

  it('lists the files with their types and reads text back as the file is', async () => {
    const client = await connect(fullKey)
    const { resources } = await client.listResources()
    expect(resources).toContainEqual({
      uri: 'toolport://workspace/default/notes/todo.md',
      name: 'notes/todo.md',
      mimeType: 'text/markdown; charset=utf-8',
      size: 14,
    })
    const read = await client.readResource({ uri: 'toolport://workspace/default/notes/todo.md' })
    expect(read.contents).toEqual([
      {
        uri: 'toolport://workspace/default/notes/todo.md',
        mimeType: 'text/markdown; charset=utf-8',
        text: '# Todo\n- ship\n',
      },
    ])
    const { resourceTemplates } = await client.listResourceTemplates()
    expect(resourceTemplates.map((template) => template.uriTemplate)).toContain(
      'toolport://workspace/{workspace}/{+path}',
    )
    await client.close()
  })

  it('pages a long listing with a cursor, and refuses a cursor it did not give', async () => {
    for (let index = 0; index < 105; index++) {
      const response = await fetch(`${server.url}/v1/tools/write_file?workspace=many`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fullKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ path: `f/${String(index).padStart(3, '0')}.txt`, content: 'x' }),
      })
      expect(response.status).toBe(200)
    }
    const client = await connect(fullKey, 'many')
    const first = await client.listResources()
    expect(first.resources).toHaveLength(100)
    expect(first.nextCursor).toEqual(expect.any(String))
    const second = await client.listResources({ cursor: first.nextCursor as string })
    expect(second.resources.map((resource) => resource.name)).toEqual([
      'f/100.txt',
      'f/101.txt',
      'f/102.txt',
      'f/103.txt',
      'f/104.txt',
    ])
    expect(second.nextCursor).toBeUndefined()
    await expect(client.listResources({ cursor: 'not-ours' })).rejects.toMatchObject({
      code: ErrorCode.InvalidParams,
    })
    await client.close()
  })

  it('reads a file a tool made through the resource_link it returned, as a blob with its type', async () => {
    const client = await connect(fullKey)
    const result = await client.callTool({
      name: 'pdf_generation',
      arguments: { content: 'Hello.', content_type: 'text', output_path: 'out/report.pdf' },
    })
    const link = (result.content as Array<{ type: string; uri?: string; description?: string }>).find(
      (block) => block.type === 'resource_link',
    )
    expect(link?.uri).toBe('toolport://workspace/default/out/report.pdf')
    expect(link?.description).toMatch(/^Download: http/)
    const read = await client.readResource({ uri: link?.uri as string })
    const [content] = read.contents as Array<{ mimeType: string; blob?: string }>
    expect(content?.mimeType).toBe('application/pdf')
    expect(
      Buffer.from(content?.blob ?? '', 'base64')
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-')
    await client.close()
  })

  it('completes workspace paths for the template', async () => {
    const client = await connect(fullKey)
    const answer = await client.complete({
      ref: { type: 'ref/resource', uri: 'toolport://workspace/{workspace}/{+path}' },
      argument: { name: 'path', value: 'notes/d' },
    })
    expect(answer.completion.values).toEqual(['notes/data.json'])
    await client.close()
  })
})

describe('the same checks as read_file', () => {
  it('a key that may not list or read sees no files and reads none', async () => {
    const client = await connect(writerKey)
    const { resources } = await client.listResources()
    expect(resources).toEqual([])
    const refused = await client
      .readResource({ uri: 'toolport://workspace/default/notes/todo.md' })
      .catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(McpError)
    expect((refused as McpError).message).toMatch(/read_file/)
    await client.close()
  })

  it('a key whose reads wait for an approver reads nothing directly', async () => {
    const client = await connect(gatedKey)
    await expect(client.readResource({ uri: 'toolport://workspace/default/notes/todo.md' })).rejects.toThrow(/approver/)
    await client.close()
  })

  it('another tenant reads its own workspace under the same URI, not this one', async () => {
    const client = await connect(otherKey)
    const refused = await client
      .readResource({ uri: 'toolport://workspace/default/notes/todo.md' })
      .catch((error: unknown) => error)
    expect((refused as McpError).code).toBe(-32002)
    expect((refused as McpError).message).toMatch(/no resource/i)
    await client.close()
  })

  it('refuses paths that leave the workspace and URIs no one serves', async () => {
    const client = await connect(fullKey)
    for (const uri of [
      'toolport://workspace/default/../../globex/default/x',
      'toolport://workspace/default/%2e%2e/x',
      'toolport://workspace/../x',
      'toolport://workspace/default/notes/%ZZ',
    ]) {
      const refused = await client.readResource({ uri }).catch((error: unknown) => error)
      expect(refused, uri).toBeInstanceOf(McpError)
      expect((refused as McpError).code, uri).not.toBe(ErrorCode.InternalError)
    }
    const missing = await client.readResource({ uri: 'file:///etc/passwd' }).catch((error: unknown) => error)
    expect((missing as McpError).code).toBe(-32002)
    const absent = await client
      .readResource({ uri: 'toolport://workspace/default/notes/absent.md' })
      .catch((error: unknown) => error)
    expect((absent as McpError).code).toBe(-32002)
    await client.close()
  })
})

describe('the context prompt', () => {
  it('lists toolport_context and answers /v1/context text as a user message', async () => {
    const client = await connect(fullKey)
    const { prompts } = await client.listPrompts()
    expect(prompts.map((prompt) => prompt.name)).toContain('toolport_context')
    const prompt = await client.getPrompt({ name: 'toolport_context' })
    const rest = await (
      await fetch(`${server.url}/v1/context`, { headers: { authorization: `Bearer ${fullKey}` } })
    ).text()
    expect(prompt.messages).toEqual([{ role: 'user', content: { type: 'text', text: rest } }])
    const many = await client.getPrompt({ name: 'toolport_context', arguments: { workspace: 'many' } })
    expect((many.messages.at(0)?.content as unknown as { text: string } | undefined)?.text).toContain(
      'workspace "many"',
    )
    const workspaces = await client.complete({
      ref: { type: 'ref/prompt', name: 'toolport_context' },
      argument: { name: 'workspace', value: 'ma' },
    })
    expect(workspaces.completion.values).toEqual(['many'])
    await expect(client.getPrompt({ name: 'nope' })).rejects.toThrow(/no prompt named/)
    // The tool prompt, and its enum-like argument completed with the tools this key may call.
    const names = await client.complete({
      ref: { type: 'ref/prompt', name: 'toolport_tool' },
      argument: { name: 'name', value: 'read_' },
    })
    expect(names.completion.values).toEqual(['read_file'])
    const guide = await client.getPrompt({ name: 'toolport_tool', arguments: { name: 'read_file' } })
    const guideText = (guide.messages.at(0)?.content as { text?: string } | undefined)?.text ?? ''
    expect(guideText).toMatch(/^The toolport tool read_file \(.+; effect read\)/)
    expect(guideText).toContain('"path"')
    await expect(client.getPrompt({ name: 'toolport_tool', arguments: { name: 'execute_nothing' } })).rejects.toThrow(
      /no tool named/,
    )
    await client.close()
  })
})
