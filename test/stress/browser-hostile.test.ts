import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startBrowserSite } from '../support/browser-site'
import { type LocalWeb, startLocalWeb } from '../support/local-web'
import { startTestServer, type TestServer } from '../support/server'

/**
 * Property-based hostile calls on a live browser session: every browser_* action with refs, keys,
 * texts, values and URLs that are wrong in every way a model (or an attacker) could make them. No call
 * may answer 5xx (but 504 for a wait that ran out) or anything but problem+json for an error, and nothing
 * may reach the victim server.
 */
let victim: LocalWeb
let site: LocalWeb
let server: TestServer
let sessionId = ''
let refs: string[] = []

beforeAll(async () => {
  victim = await startLocalWeb({})
  site = await startBrowserSite(victim.port)
  server = await startTestServer({
    TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${site.port}`,
    TOOLPORT_BROWSER_ACTION_SECONDS: '5',
  })
  const opened = await server.call('browser_open', { url: `${site.url}/form` })
  expect(opened.status, JSON.stringify(opened.body)).toBe(200)
  sessionId = opened.body.session_id
  refs = [...opened.body.snapshot.matchAll(/\[ref=(e\d+)\]/g)].map((match: RegExpMatchArray) => match[1] as string)
  await server.call('write_file', { path: 'in.txt', content: 'x' })
})
afterAll(async () => {
  await server?.stop()
  await site?.stop()
  await victim?.stop()
})

const ref = () =>
  fc.oneof(
    fc.constantFrom(...refs),
    fc.nat({ max: 100_000 }).map((n) => `e${n}`),
    fc.string({ maxLength: 40 }),
    fc.constantFrom('e0', 'e-1', 'e1e', 'E12', 'e99999999999', ' e1', 'e1\u0000', '[ref=e1]'),
  )

const url = () =>
  fc.oneof(
    fc.constantFrom(
      'file:///etc/passwd',
      'chrome://settings',
      'javascript:alert(1)',
      'data:text/html,<script>fetch("http://127.0.0.1:1/")</script>',
      'about:blank',
      'http://169.254.169.254/latest/meta-data/',
      'http://[::1]:1/',
      'http://0x7f000001/',
      'http://127.1/',
      'ftp://127.0.0.1/',
      'view-source:http://127.0.0.1/',
      '',
      'not a url',
    ),
    fc
      .constantFrom('/login', '/form', '/to-blocked', '/sneaky', '/popups', '/report.csv')
      .map((path) => `${site.url}${path}`),
    fc.nat({ max: 65_535 }).map((port) => `http://127.0.0.1:${port}/`),
  )

const call = () =>
  fc.oneof(
    fc.record({
      tool: fc.constant('browser_click'),
      body: fc.record({ ref: ref(), button: fc.constantFrom('left', 'right', 'middle') }),
    }),
    fc.record({
      tool: fc.constant('browser_type'),
      body: fc.record({ ref: ref(), text: fc.string({ maxLength: 200 }), submit: fc.boolean() }),
    }),
    fc.record({
      tool: fc.constant('browser_select_option'),
      body: fc.record({ ref: ref(), values: fc.array(fc.string({ maxLength: 20 }), { minLength: 1, maxLength: 4 }) }),
    }),
    fc.record({
      tool: fc.constant('browser_press_key'),
      body: fc.record({ key: fc.string({ minLength: 1, maxLength: 32 }) }),
    }),
    fc.record({ tool: fc.constant('browser_hover'), body: fc.record({ ref: ref() }) }),
    fc.record({
      tool: fc.constant('browser_scroll'),
      body: fc.record({ y: fc.integer({ min: -100_000, max: 100_000 }) }),
    }),
    fc.record({ tool: fc.constant('browser_navigate'), body: fc.record({ url: url() }) }),
    fc.record({
      tool: fc.constant('browser_file_upload'),
      body: fc.record({
        ref: ref(),
        paths: fc.constantFrom(['in.txt'], ['../x'], ['missing.txt'], ['in.txt', 'in.txt']),
      }),
    }),
    fc.record({ tool: fc.constant('browser_screenshot'), body: fc.record({ ref: ref() }) }),
    fc.record({
      tool: fc.constant('browser_tabs'),
      body: fc.record({ action: fc.constant('select'), index: fc.nat({ max: 20 }) }),
    }),
    fc.record({
      tool: fc.constant('browser_wait_for'),
      body: fc.record({ text: fc.string({ minLength: 1, maxLength: 20 }), time: fc.constantFrom(0, 0.2) }),
    }),
  )

describe('hostile calls on a live browser session (property-based)', () => {
  it('never answers 5xx (but a 504 timeout), always problem+json, and reaches nothing', {
    timeout: 300_000,
  }, async () => {
    await fc.assert(
      fc.asyncProperty(call(), async ({ tool, body }) => {
        const result = await server.call(tool, { session_id: sessionId, ...body })
        const label = `${tool} ${JSON.stringify(body).slice(0, 200)}: ${JSON.stringify(result.body).slice(0, 300)}`
        // A wait that ran out is 504 timeout, an answer of its own; nothing else may be 5xx.
        if (result.status === 504) expect(result.body.code, label).toBe('timeout')
        else expect(result.status, label).toBeLessThan(500)
        if (result.status >= 400) {
          expect(result.headers.get('content-type'), label).toContain('application/problem+json')
          expect(result.body.hint, label).toBeTruthy()
        }
      }),
      { numRuns: 80, seed: 20261201 },
    )
    // The session survived all of it.
    expect((await server.call('browser_snapshot', { session_id: sessionId })).status).toBe(200)
    expect(victim.hits).toEqual([])
  })
})
