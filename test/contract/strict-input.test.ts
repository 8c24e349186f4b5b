import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isSchema } from '../../src/core/json-schema'
import { startTestServer, type TestServer } from '../support/server'

// A model that guesses a field name must learn it guessed wrong, not get success and the wrong result.

let server: TestServer

beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => {
  await server.stop()
})

async function listed(): Promise<string[]> {
  const body = await server.call('list_files', { path: '', recursive: true })
  return body.body.entries.map((entry: { path: string }) => entry.path)
}

describe('unknown input fields', () => {
  it('outputPath → 400 validation naming the field, with "did you mean output_path?", and nothing written', async () => {
    const response = await server.call('pdf_generation', { content: 'hi', outputPath: 'r/x.pdf' })
    expect(response.status).toBe(400)
    expect(response.headers.get('content-type')).toContain('application/problem+json')
    expect(response.body).toMatchObject({ code: 'validation', field: 'outputPath', did_you_mean: 'output_path' })
    expect(response.body.hint).toContain('did you mean output_path?')
    expect(await listed()).toEqual([])
  })

  it('workingDirectory and documentType name their snake_case fields', async () => {
    const shell = await server.call('execute_command', { command: 'pwd', workingDirectory: 'sub' })
    expect(shell.status).toBe(400)
    expect(shell.body).toMatchObject({ code: 'validation', field: 'workingDirectory' })
    expect(shell.body.hint).toContain('did you mean working_directory?')
    const office = await server.call('office_document', { documentType: 'word', content: 'x' })
    expect(office.status).toBe(400)
    expect(office.body).toMatchObject({ code: 'validation', field: 'documentType' })
    expect(office.body.hint).toContain('did you mean document_type?')
  })

  it('nested objects and array items are strict too, named by their dotted path', async () => {
    await server.call('write_file', { path: 'a.txt', content: 'one\n' })
    const edit = await server.call('multi_edit', { path: 'a.txt', edits: [{ old_text: 'one', newText: 'two' }] })
    expect(edit.status).toBe(400)
    expect(edit.body).toMatchObject({ field: 'edits.0.newText', did_you_mean: 'edits.0.new_text' })
    const office = await server.call('office_document', {
      document_type: 'word',
      content: 'x',
      customization: { primaryColor: '1A73E8' },
    })
    expect(office.status).toBe(400)
    expect(office.body).toMatchObject({ field: 'customization.primaryColor' })
    expect(office.body.hint).toContain('did you mean primary_color?')
    expect((await server.call('read_file', { path: 'a.txt' })).body.content).toBe('one\n')
  })

  it('a field unlike any known one is refused with the list of fields', async () => {
    const response = await server.call('read_file', { path: 'a.txt', zebra: true })
    expect(response.status).toBe(400)
    expect(response.body).toMatchObject({ code: 'validation', field: 'zebra' })
    expect(response.body.did_you_mean).toBeUndefined()
    expect(response.body.hint).toContain('path, start_line, end_line')
  })

  it('over MCP the same refusal is a tool error the model reads', async () => {
    const response = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'read_file', arguments: { path: 'a.txt', startLine: 1 } },
      }),
    })
    const body = await response.json()
    expect(body.result.isError).toBe(true)
    const problem = JSON.parse(body.result.content[0].text)
    expect(problem).toMatchObject({ code: 'validation', field: 'startLine', did_you_mean: 'start_line' })
  })

  it('every published built-in input schema says additionalProperties: false on its objects (but the GPT file refs)', async () => {
    const catalog = await (await fetch(`${server.url}/v1/tools`)).json()
    const loose: string[] = []
    const walk = (schema: unknown, where: string) => {
      if (Array.isArray(schema)) {
        for (const item of schema) walk(item, where)
        return
      }
      if (!isSchema(schema)) return
      if (isSchema(schema.properties) && schema.additionalProperties !== false) loose.push(where)
      for (const [key, value] of Object.entries(schema)) {
        if (key === 'properties' && isSchema(value)) {
          for (const [name, child] of Object.entries(value)) walk(child, `${where}.${name}`)
        } else walk(value, where)
      }
    }
    for (const tool of catalog.tools) walk(tool.input_schema, tool.name)
    expect(loose).toEqual(['excel_analyze.openaiFileIdRefs'])
  })
})

describe('unknown and repeated query parameters', () => {
  const post = (query: string, body: unknown) =>
    fetch(`${server.url}/v1/tools/write_file${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })

  it('a mistyped ?dryrun=true is refused with its likely meaning, and nothing is written', async () => {
    const response = await post('?dryrun=true', { path: 'typo.txt', content: 'x' })
    expect(response.status).toBe(400)
    expect(response.headers.get('content-type')).toContain('application/problem+json')
    expect(await response.json()).toMatchObject({ code: 'validation', field: 'dryrun', did_you_mean: 'dry_run' })
    const workspaces = await post('?workspaces=other', { path: 'typo.txt', content: 'x' })
    expect(await workspaces.json()).toMatchObject({ field: 'workspaces', did_you_mean: 'workspace' })
    expect(await listed()).not.toContain('typo.txt')
  })

  it('a parameter given twice is refused rather than one of its values taken', async () => {
    for (const query of ['?workspace=a&workspace=b', '?dry_run=true&dry_run=false']) {
      const response = await post(query, { path: 'twice.txt', content: 'x' })
      expect(response.status).toBe(400)
      expect((await response.json()).detail).toMatch(/more than once/)
    }
    expect(await listed()).not.toContain('twice.txt')
  })

  it('the catalog, the context, the OpenAPI document, jobs and MCP refuse what they do not take', async () => {
    for (const path of [
      '/v1/tools?fromat=openai',
      '/v1/context?formt=json',
      '/openapi.json?tool=read_file',
      '/v1/jobs/00000000-0000-4000-8000-000000000000?wait=1',
    ]) {
      const response = await fetch(`${server.url}${path}`)
      expect(response.status, path).toBe(400)
      expect((await response.json()).code, path).toBe('validation')
    }
    const mcp = await fetch(`${server.url}/mcp?workspaces=x`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    })
    expect(mcp.status).toBe(400)
    // What they do take still works.
    expect((await fetch(`${server.url}/v1/tools?format=openai`)).status).toBe(200)
    expect((await fetch(`${server.url}/v1/context?format=json&workspace=default`)).status).toBe(200)
  })

  it('a problem never echoes megabytes of what was sent: a huge field name, or thousands of them', async () => {
    const huge = await server.call('read_file', { path: 'a', ['x'.repeat(5_000_000)]: 1 })
    expect(huge.status).toBe(400)
    expect(JSON.stringify(huge.body).length).toBeLessThan(2_000)
    const many = await server.call(
      'read_file',
      Object.fromEntries([['path', 'a'], ...Array.from({ length: 50_000 }, (_, index) => [`k${index}`, 1])]),
    )
    expect(many.status).toBe(400)
    expect(JSON.stringify(many.body).length).toBeLessThan(2_000)
    expect(many.body.detail).toMatch(/and 49995 more/)
    const query = await fetch(`${server.url}/v1/tools/read_file?${'q'.repeat(4000)}=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"path":"a"}',
    })
    expect(query.status).toBe(400)
    expect((await query.text()).length).toBeLessThan(2_000)
  })
})

describe('bodies that are not well-formed UTF-8 text', () => {
  const raw = (body: Uint8Array | string, contentType = 'application/json', path = '/v1/tools/write_file') =>
    fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': contentType }, body: body as BodyInit })

  it('bytes that are not UTF-8 are refused, in a value or a path, and nothing is stored', async () => {
    const bytes = (text: string, bad: number[], at: string) => {
      const [before, after] = text.split(at) as [string, string]
      return new Uint8Array([...Buffer.from(before), ...bad, ...Buffer.from(after)])
    }
    for (const body of [
      bytes('{"path":"u8.txt","content":"a#b"}', [0xff, 0xfe], '#'),
      bytes('{"path":"u#.txt","content":"x"}', [0xff], '#'),
      bytes('{"path":"cut.txt","content":"a#"}', [0xc3], '#'),
    ]) {
      const response = await raw(body)
      expect(response.status).toBe(400)
      expect(await response.json()).toMatchObject({
        code: 'validation',
        detail: 'The request body is not valid UTF-8.',
      })
    }
    expect((await listed()).filter((path) => /u8|cut|u.\.txt/.test(path))).toEqual([])
  })

  it('a lone surrogate escape is refused with its field; a pair (an emoji) is text like any other', async () => {
    const lone = await raw('{"path":"s.txt","content":"a\\ud800b"}')
    expect(lone.status).toBe(400)
    expect(await lone.json()).toMatchObject({ code: 'validation', field: 'content' })
    const key = await raw('{"path":"s.txt","content":"x","\\udc00":1}')
    expect(key.status).toBe(400)
    const pair = await raw('{"path":"emoji.txt","content":"\\ud83d\\ude00"}')
    expect(pair.status).toBe(200)
    expect((await server.call('read_file', { path: 'emoji.txt' })).body.content).toBe('😀')
    expect(await listed()).not.toContain('s.txt')
  })

  it('a "__proto__" key is refused wherever it is, not dropped by the schema', async () => {
    const nested = await raw(
      '{"url":"http://192.0.2.1/","headers":{"__proto__":{"authorization":"x"}}}',
      'application/json',
      '/v1/tools/http_fetch?dry_run=true',
    )
    expect(nested.status).toBe(400)
    expect(await nested.json()).toMatchObject({ code: 'validation', field: 'headers.__proto__' })
    const top = await raw('{"path":"p.txt","content":"x","__proto__":{"mode":"replace"}}')
    expect(top.status).toBe(400)
    expect(await listed()).not.toContain('p.txt')
  })

  it('a JSON body declared in another charset is 415, UTF-8 in any spelling is read', async () => {
    const latin1 = await raw('{"path":"c.txt","content":"x"}', 'application/json; charset=latin1')
    expect(latin1.status).toBe(415)
    expect((await latin1.json()).code).toBe('unsupported_media_type')
    for (const type of [
      'application/json; charset=UTF-8',
      'application/json;charset="utf-8"',
      'application/json; charset=utf8',
    ]) {
      expect((await raw('{"path":"c.txt","content":"x"}', type)).status, type).toBe(200)
    }
  })

  it('over MCP the same bodies are JSON-RPC errors, not calls', async () => {
    const mcp = (body: Uint8Array | string) =>
      fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: body as BodyInit,
      })
    const call = (content: string) =>
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"m.txt","content":"${content}"}}}`
    const notUtf8 = await mcp(new Uint8Array([...Buffer.from(call('a')).subarray(0, -5), 0xff, ...Buffer.from('"}}}')]))
    expect(notUtf8.status).toBe(400)
    expect((await notUtf8.json()).error.code).toBe(-32700)
    const lone = await mcp(call('a\\ud800'))
    expect(lone.status).toBe(400)
    expect((await lone.json()).error.code).toBe(-32600)
    const proto = await mcp(
      '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"m.txt","content":"x","__proto__":{"x":1}}}}',
    )
    expect(proto.status).toBe(400)
    expect((await proto.json()).error.code).toBe(-32600)
    // A batch whose answers could not be told apart runs none of its calls.
    const write = (id: number, path: string) =>
      `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"write_file","arguments":{"path":"${path}","content":"x"}}}`
    const duplicate = await mcp(`[${write(7, 'dup-a.txt')},${write(7, 'dup-b.txt')}]`)
    expect(duplicate.status).toBe(400)
    expect((await duplicate.json()).error).toMatchObject({ code: -32600 })
    const empty = await mcp('[]')
    expect(empty.status).toBe(400)
    expect((await empty.json()).error.code).toBe(-32600)
    expect((await listed()).filter((path) => path.startsWith('dup-'))).toEqual([])
    expect(await listed()).not.toContain('m.txt')
  })
})

describe('a call without a body', () => {
  const post = (tool: string, headers: Record<string, string> = {}, body?: string) =>
    fetch(`${server.url}/v1/tools/${tool}`, { method: 'POST', headers, ...(body !== undefined ? { body } : {}) })

  it('is a call with {} for a tool whose input needs nothing: no body, or an empty one', async () => {
    for (const [headers, body] of [
      [{}, undefined],
      [{ 'content-type': 'application/json' }, ''],
      [{ 'content-type': 'application/json' }, '  \n'],
    ] as const) {
      const answer = await post('list_files', headers, body)
      expect(answer.status, await answer.clone().text()).toBe(200)
      expect(await answer.json()).toHaveProperty('entries')
    }
  })

  it('is refused for a tool with a required field, naming it', async () => {
    const answer = await post('read_file', { 'content-type': 'application/json' }, '')
    expect(answer.status).toBe(400)
    expect(await answer.json()).toMatchObject({ code: 'validation', field: 'path' })
  })
})
