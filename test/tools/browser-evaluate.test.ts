import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type LocalWeb, startLocalWeb } from '../support/local-web'
import { startTestServer, type TestServer } from '../support/server'

// browser_evaluate where the operator allows it: a script that fails is the caller's 400 with the
// page's message (never the browser's 503, which tells clients to retry), and a script that never ends
// is stopped at the action deadline while the session stays usable.

let site: LocalWeb
let server: TestServer

beforeAll(async () => {
  site = await startLocalWeb({
    '/': (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' })
      response.end('<!doctype html><title>Script page</title><p>Hello</p>')
    },
  })
  server = await startTestServer({
    TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${site.port}`,
    TOOLPORT_BROWSER_ALLOW_EVALUATE: 'true',
    TOOLPORT_BROWSER_ACTION_SECONDS: '3',
  })
})
afterAll(async () => {
  await server?.stop()
  await site?.stop()
})

async function open(): Promise<string> {
  const opened = await server.call('browser_open', { url: `${site.url}/` })
  expect(opened.status, JSON.stringify(opened.body).slice(0, 500)).toBe(200)
  return opened.body.session_id as string
}

const evaluate = (session_id: string, expression: string) => server.call('browser_evaluate', { session_id, expression })

describe('browser_evaluate', () => {
  it.each([
    ['a throw', 'throw new Error("nope")', 'Error: nope'],
    ['a rejected promise', 'Promise.reject(new TypeError("bad type"))', 'TypeError: bad type'],
    ['a syntax error', 'let = ;', 'SyntaxError'],
    ['an undefined function', 'notDefinedAnywhere()', 'ReferenceError: notDefinedAnywhere is not defined'],
    ['a thrown string', 'Promise.reject("plain words")', '"plain words"'],
  ])(
    'answers %s with 400 and the page’s message, and the session goes on',
    { timeout: 60_000 },
    async (_, script, message) => {
      const id = await open()
      const failed = await evaluate(id, script)
      expect(failed.status, JSON.stringify(failed.body)).toBe(400)
      expect(failed.body).toMatchObject({ code: 'validation', field: 'expression' })
      expect(failed.body.detail).toContain(message)
      expect(failed.headers.get('retry-after')).toBeNull()
      const after = await evaluate(id, 'document.title')
      expect(after).toMatchObject({ status: 200, body: { value: 'Script page' } })
      await server.call('browser_close', { session_id: id })
    },
  )

  it('stops an endless loop at the action deadline, and the session answers the next action', {
    timeout: 60_000,
  }, async () => {
    const id = await open()
    try {
      await expectStopped(id)
    } finally {
      await server.call('browser_close', { session_id: id })
    }
  })

  async function expectStopped(id: string) {
    const looping = await evaluate(id, 'while (true) {}')
    expect(looping.status, JSON.stringify(looping.body)).toBe(504)
    expect(looping.body.detail).toMatch(/ran longer than \d+ s and was stopped/)
    const title = await evaluate(id, 'document.title')
    expect(title).toMatchObject({ status: 200, body: { value: 'Script page' } })
    const snapshot = await server.call('browser_snapshot', { session_id: id })
    expect(snapshot.status).toBe(200)
    expect(snapshot.body.snapshot).toContain('Hello')
  }
})
