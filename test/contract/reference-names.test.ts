import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestServer } from '../support/server'

// A client written for a reference system, calling with its own names and fields: without a compat
// pack every reference name gets toolport's in a "did you mean"; with the pack, Boris's own
// get_system_info() works as its documentation writes it.

const key = 'refnames-key-0123456789'
let plain: TestServer
let boris: TestServer

beforeAll(async () => {
  plain = await startTestServer({ TOOLPORT_API_KEYS: `acme=${key}` })
  boris = await startTestServer({ TOOLPORT_API_KEYS: `acme=${key}`, TOOLPORT_COMPAT_PACKS: 'boris' })
})
afterAll(async () => {
  await plain?.stop()
  await boris?.stop()
})

describe('reference names without a pack', () => {
  it('answers each reference tool name with the name it means here', async () => {
    const names: Array<[string, string]> = [
      ['shell', 'execute_command'],
      ['file_read', 'read_file'],
      ['file_write', 'write_file'],
      ['env', 'get_env'],
      ['get_system_info', 'system_info'],
    ]
    for (const [theirs, ours] of names) {
      const call = await plain.call(theirs, {}, { key })
      expect(call.status, theirs).toBe(404)
      expect(call.body.did_you_mean, theirs).toBe(ours)
      expect(call.body.hint, theirs).toContain(`Did you mean ${ours}?`)
    }
    // A misspelling of a name here is suggested too; a name like nothing gets no guess.
    expect((await plain.call('read_fiel', { path: 'x' }, { key })).body.did_you_mean).toBe('read_file')
    expect((await plain.call('make_coffee', {}, { key })).body.did_you_mean).toBeUndefined()
    // Names an object inherits are names like any other, never a lookup into a table's prototype.
    for (const inherited of ['constructor', '__proto__', 'toString']) {
      const call = await plain.call(inherited, {}, { key })
      expect(call.status, inherited).toBe(404)
      const field = await plain.call('read_file', { path: 'x', [inherited]: 'y' }, { key })
      expect(field.status, inherited).toBe(400)
    }
  })

  it("answers a reference field with the field it means, as for toolport's own misspellings", async () => {
    const read = await plain.call('read_file', { filePath: 'notes.md' }, { key })
    expect(read.status).toBe(400)
    expect(read.body).toMatchObject({ field: 'filePath', did_you_mean: 'path' })
    expect(read.body.hint).toContain('did you mean path?')
    const excel = await plain.call('excel_analyze', { filePath: 'q3.xlsx' }, { key })
    expect(excel.body).toMatchObject({ field: 'filePath', did_you_mean: 'path' })
    const camel = await plain.call('pdf_generation', { content: '# x', outputPath: 'r.pdf' }, { key })
    expect(camel.body).toMatchObject({ field: 'outputPath', did_you_mean: 'output_path' })
  })

  it('says it over MCP too', async () => {
    const client = new Client({ name: 'refnames', version: '1.0.0' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${plain.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    )
    await expect(client.callTool({ name: 'shell', arguments: { command: 'ls' } })).rejects.toThrow(
      /Unknown tool: shell\. Did you mean execute_command\?/,
    )
    await client.close()
  })
})

describe('the boris pack', () => {
  it("serves get_system_info(), the name Boris's documentation calls it by", async () => {
    const info = await boris.call('get_system_info', {}, { key })
    expect(info.status, JSON.stringify(info.body)).toBe(200)
    const builtin = await boris.call('system_info', {}, { key })
    expect(Object.keys(info.body).sort()).toEqual(Object.keys(builtin.body).sort())
  })
})
