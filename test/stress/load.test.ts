import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadContent, runMixedLoad } from '../support/load'
import { startTestServer, type TestServer } from '../support/server'

// The short form of the load run (`npm run soak` is the long one): 64 connections of mixed calls.
const seconds = Number(process.env.LOAD_SECONDS ?? 5)

let server: TestServer
beforeAll(async () => {
  server = await startTestServer({ TOOLPORT_SANDBOX: 'none' })
})
afterAll(async () => {
  await server.stop()
})

describe('load', () => {
  it(`serves ${seconds} s of mixed calls on 64 connections with no 5xx, no socket errors and nothing lost`, async () => {
    // Every path exists before the run, so the checksum pass covers files the run rewrote and read.
    for (let index = 0; index < 50; index++) {
      const path = `load/${index}.txt`
      await server.call('write_file', { path, content: loadContent(path) }, { workspace: 'load' })
    }
    const result = await runMixedLoad({ url: server.url, connections: 64, durationSeconds: seconds })
    expect(result.requests).toBeGreaterThan(100)
    expect(result.status5xx).toBe(0)
    expect(result.errors).toBe(0)
    expect(result.timeouts).toBe(0)
    // Edits of missing text and the traversal attempt are the expected 4xx share of the mix.
    expect(result.status4xx).toBeGreaterThan(0)
    for (const [path, content] of result.written) {
      const read = await server.call('read_file', { path }, { workspace: 'load' })
      expect(read.body.content, path).toBe(content)
    }
  })
})
