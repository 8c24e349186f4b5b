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
