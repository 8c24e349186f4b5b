import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { allTools } from '../../src/tools/builtins'
import { type Tool, titleOfCall } from '../../src/tools/tool'
import { startTestServer, type TestServer } from '../support/server'

let server: TestServer

beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => {
  await server.stop()
})

interface ServerEvent {
  event: string
  // biome-ignore lint/suspicious/noExplicitAny: events carry arbitrary JSON
  data: any
}

async function stream(tool: string, input: unknown): Promise<ServerEvent[]> {
  const response = await fetch(`${server.url}/v1/tools/${tool}?workspace=events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify(input),
  })
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toContain('text/event-stream')
  return (await response.text())
    .split(/\n\n+/)
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const field = (name: string) =>
        block
          .split('\n')
          .filter((line) => line.startsWith(`${name}:`))
          .map((line) => line.slice(name.length + 1).trimStart())
          .join('\n')
      return { event: field('event'), data: JSON.parse(field('data')) }
    })
}

describe('Accept: text/event-stream', () => {
  it('write_file: call (with a per-call title) then result, the same payload as the JSON answer', async () => {
    const events = await stream('write_file', { path: 'notes.md', content: 'alpha\n', mode: null })
    expect(events.map((event) => event.event)).toEqual(['call', 'result'])
    expect(events[0]?.data).toEqual({
      tool: 'write_file',
      title: 'Write notes.md',
      input: { path: 'notes.md', content: 'alpha\n', mode: 'write' },
    })
    expect(events[1]?.data).toEqual({ path: 'notes.md', bytes_written: 6, mode: 'write', created: true })
  })

  it('a call asking for a stream and a job at once is refused, and nothing runs', async () => {
    for (const [query, prefer] of [
      ['&async=true', undefined],
      ['', 'respond-async'],
    ] as const) {
      const response = await fetch(`${server.url}/v1/tools/write_file?workspace=events${query}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'text/event-stream',
          ...(prefer ? { prefer } : {}),
        },
        body: JSON.stringify({ path: 'both.txt', content: 'x' }),
      })
      expect(response.status).toBe(400)
      expect(await response.json()).toMatchObject({ code: 'validation', field: 'async' })
    }
    expect((await server.call('read_file', { path: 'both.txt' }, { workspace: 'events' })).status).toBe(404)
  })

  it('read_file: call titled "Read <path>", then the result', async () => {
    const events = await stream('read_file', { path: 'notes.md' })
    expect(events.map((event) => event.event)).toEqual(['call', 'result'])
    expect(events[0]?.data.title).toBe('Read notes.md')
    expect(events[1]?.data).toMatchObject({ content: 'alpha\n', total_lines: 1 })
  })

  it('a failing apply_edit: call titled "Edit <path>", then an error event with the problem', async () => {
    const events = await stream('apply_edit', { path: 'notes.md', old_text: 'missing', new_text: 'x' })
    expect(events.map((event) => event.event)).toEqual(['call', 'error'])
    expect(events[0]?.data.title).toBe('Edit notes.md')
    expect(events[1]?.data).toMatchObject({
      type: 'urn:toolport:problem:not_found',
      status: 404,
      code: 'not_found',
      field: 'old_text',
      hint: expect.stringContaining('read_file'),
    })
  })
})

describe('call titles', () => {
  const tool = (name: string) => allTools.find((candidate) => candidate.name === name) as Tool

  it('name each file and shell call by what it works on', () => {
    expect(titleOfCall(tool('multi_edit'), { path: 'src/app.ts', edits: [] })).toBe('Edit src/app.ts')
    expect(titleOfCall(tool('revert_edit'), { path: 'a.txt' })).toBe('Edit a.txt')
    expect(titleOfCall(tool('delete_file'), { path: 'old.log' })).toBe('Delete old.log')
    expect(titleOfCall(tool('list_files'), { path: 'src' })).toBe('List src')
    expect(titleOfCall(tool('list_files'), { path: '' })).toBe('List workspace root')
    expect(titleOfCall(tool('execute_command'), { command: 'npm test' })).toBe('Run: npm test')
    const long = titleOfCall(tool('execute_command'), { command: `echo ${'x'.repeat(100)}\nls` })
    expect(long).toBe(`Run: echo ${'x'.repeat(55)}…`)
  })

  it('fall back to the tool title when a tool has none, or its callTitle throws', () => {
    const plain = { ...tool('read_file'), callTitle: undefined }
    expect(titleOfCall(plain, { path: 'a' })).toBe('Read file')
    expect(titleOfCall(tool('read_file'), null)).toBe('Read file')
  })
})

describe('Accept and Content-Encoding', () => {
  it('text/event-stream with q=0 is refused as a stream: the answer is JSON', async () => {
    const response = await fetch(`${server.url}/v1/tools/read_file?workspace=events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream;q=0' },
      body: JSON.stringify({ path: 'nothing-here.txt' }),
    })
    expect(response.headers.get('content-type')).toContain('application/problem+json')
    expect(response.status).toBe(404)
  })

  it('a compressed body is 415 with a hint, not "not valid JSON"', async () => {
    const { gzipSync } = await import('node:zlib')
    const response = await fetch(`${server.url}/v1/tools/read_file?workspace=events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify({ path: 'a.txt' })),
    })
    expect(response.status).toBe(415)
    expect(await response.json()).toMatchObject({ code: 'unsupported_media_type' })
  })
})
