import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestServer } from '../support/server'

// A file over TOOLPORT_MAX_FILE_BYTES can still be read by line range: its hint says so, and it works.

let server: TestServer
const root = 'tenants/default/workspaces/default'
const lines = Array.from({ length: 20000 }, (_, index) => `line ${index + 1} ${'é'.repeat(index % 7)}\n`)

beforeAll(async () => {
  server = await startTestServer({ TOOLPORT_MAX_FILE_BYTES: '4096' })
  await server.storage.put(`${root}/big.log`, lines.join(''))
  await server.storage.put(`${root}/no-newline.log`, `${lines.join('')}last without newline`)
  await server.storage.put(`${root}/binary.bin`, new Uint8Array(8192).fill(0))
})
afterAll(async () => {
  await server.stop()
})

describe('read_file of a file over the size limit', () => {
  it('whole: 413 with a hint to read a line range', async () => {
    const whole = await server.call('read_file', { path: 'big.log' })
    expect(whole.status).toBe(413)
    expect(whole.body.hint).toContain('line range')
  })

  it('a line range streams just those lines, with the whole count', async () => {
    const range = await server.call('read_file', { path: 'big.log', start_line: 2500, end_line: 2502 })
    expect(range.status, JSON.stringify(range.body)).toBe(200)
    expect(range.body).toMatchObject({
      path: 'big.log',
      content: lines.slice(2499, 2502).join(''),
      total_lines: 20000,
      start_line: 2500,
      end_line: 2502,
      truncated: false,
    })
    const last = await server.call('read_file', { path: 'no-newline.log', start_line: 20001 })
    expect(last.body).toMatchObject({ content: 'last without newline', total_lines: 20001, end_line: 20001 })
  })

  it('the response limit cuts a long range, saying where to continue', async () => {
    const range = await server.call('read_file', { path: 'big.log', start_line: 1 })
    expect(range.status).toBe(200)
    expect(range.body.truncated).toBe(true)
    expect(range.body.content).toBe(lines.slice(0, range.body.end_line).join(''))
    expect(range.body.hint).toContain(`start_line ${range.body.end_line + 1}`)
    expect(JSON.stringify(range.body).length).toBeLessThanOrEqual(100_000)
    expect(range.body.content.length).toBeLessThanOrEqual(4096)
  })

  it('never returns more than TOOLPORT_MAX_FILE_BYTES in one read, however wide the range', async () => {
    const wide = await server.call('read_file', { path: 'big.log', start_line: 1, end_line: 1000 })
    expect(wide.status, JSON.stringify(wide.body).slice(0, 300)).toBe(200)
    expect(new TextEncoder().encode(wide.body.content).length).toBeLessThanOrEqual(4096)
    expect(wide.body.truncated).toBe(true)
    expect(wide.body.content).toBe(lines.slice(0, wide.body.end_line).join(''))
    expect(wide.body.hint).toContain(`start_line ${wide.body.end_line + 1}`)
  })

  it('past the end and binary files are refused as for small files', async () => {
    const past = await server.call('read_file', { path: 'big.log', start_line: 30000 })
    expect(past).toMatchObject({ status: 400, body: { field: 'start_line', total_lines: 20000 } })
    const binary = await server.call('read_file', { path: 'binary.bin', start_line: 1, end_line: 2 })
    expect(binary).toMatchObject({ status: 400, body: { field: 'path' } })
  })
})
