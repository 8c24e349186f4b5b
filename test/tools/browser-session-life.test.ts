import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createChromiumBrowser } from '../../src/browser/chromium'
import { createBrowserSessions } from '../../src/browser/session/manager'
import { browserSessionSettings } from '../../src/browser/session/settings'
import { silentLogger } from '../../src/core/logger'
import { loadSettings } from '../../src/core/settings'
import { createNodeHttpClient } from '../../src/net/node-http'
import { refFor, startBrowserSite } from '../support/browser-site'
import { type LocalWeb, startLocalWeb } from '../support/local-web'
import { startTestServer, type TestServer } from '../support/server'

/**
 * The rules of a session's life, over HTTP: it belongs to its tenant, ends on browser_close, when
 * idle and at its maximum life, counts against the instance's and the tenant's limits (429 with
 * Retry-After), names its instance, and a crashed renderer ends that session only.
 */
const aliceKey = 'alice-browser-key-0123456789'
const bobKey = 'bob-browser-key-0123456789'

let victim: LocalWeb
let site: LocalWeb

beforeAll(async () => {
  victim = await startLocalWeb({})
  site = await startBrowserSite(victim.port)
})
afterAll(async () => {
  await site?.stop()
  await victim?.stop()
})

async function withServer(env: Record<string, string>, test: (server: TestServer) => Promise<void>): Promise<void> {
  const server = await startTestServer({
    TOOLPORT_API_KEYS: `alice=${aliceKey},bob=${bobKey}`,
    TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${site.port}`,
    ...env,
  })
  try {
    await test(server)
  } finally {
    await server.stop()
  }
}

describe('session ownership and ends', () => {
  it('answers another tenant exactly as for an unknown session, and ends on browser_close', {
    timeout: 60_000,
  }, async () => {
    await withServer({}, async (server) => {
      const opened = await server.call('browser_open', { url: `${site.url}/second` }, { key: aliceKey })
      expect(opened.status, JSON.stringify(opened.body)).toBe(200)
      const id = opened.body.session_id
      const unknown = await server.call('browser_snapshot', { session_id: `${id.slice(0, -4)}0000` }, { key: bobKey })
      const calls: Array<[string, Record<string, unknown>]> = [
        ['browser_snapshot', {}],
        ['browser_navigate', { url: `${site.url}/second` }],
        ['browser_click', { ref: 'e1' }],
        ['browser_console', {}],
        ['browser_close', {}],
      ]
      for (const [tool, body] of calls) {
        const stolen = await server.call(tool, { session_id: id, ...body }, { key: bobKey })
        expect(stolen.status, `${tool}: ${JSON.stringify(stolen.body)}`).toBe(404)
        expect(stolen.body.detail.replace(id, 'ID')).toBe(unknown.body.detail.replace(/"bs-[^"]+"/, '"ID"'))
      }
      expect((await server.call('browser_snapshot', { session_id: id }, { key: aliceKey })).status).toBe(200)
      expect((await server.call('browser_close', { session_id: id }, { key: aliceKey })).status).toBe(200)
      const after = await server.call('browser_snapshot', { session_id: id }, { key: aliceKey })
      expect(after.status).toBe(404)
      expect(after.body.detail).toContain('closed with browser_close')
      expect(after.body.hint).toContain('browser_open')
    })
  })

  it('closes a session left idle, and one past its maximum life however busy', { timeout: 60_000 }, async () => {
    await withServer(
      { TOOLPORT_BROWSER_SESSION_IDLE_SECONDS: '1', TOOLPORT_BROWSER_SESSION_MAX_SECONDS: '4' },
      async (server) => {
        const idle = (await server.call('browser_open', {}, { key: aliceKey })).body.session_id
        const busy = (await server.call('browser_open', {}, { key: aliceKey })).body.session_id
        let idleAnswer = await server.call('browser_snapshot', { session_id: busy }, { key: aliceKey })
        const until = Date.now() + 20_000
        let busyAnswer = idleAnswer
        // The busy one is touched every 300 ms: idle never ends it, its maximum life does.
        while (Date.now() < until) {
          busyAnswer = await server.call('browser_snapshot', { session_id: busy }, { key: aliceKey })
          if (busyAnswer.status === 404) break
          await new Promise((resolve) => setTimeout(resolve, 300))
        }
        idleAnswer = await server.call('browser_snapshot', { session_id: idle }, { key: aliceKey })
        expect(idleAnswer.status).toBe(404)
        expect(idleAnswer.body.detail).toContain('idle for 1 s')
        expect(busyAnswer.status).toBe(404)
        expect(busyAnswer.body.detail).toContain('maximum life of 4 s')
      },
    )
  })
})

describe('session limits', () => {
  it('answers 429 with Retry-After past the tenant limit and the instance limit', { timeout: 60_000 }, async () => {
    await withServer({ TOOLPORT_BROWSER_SESSIONS: '2', TOOLPORT_BROWSER_SESSIONS_PER_TENANT: '1' }, async (server) => {
      const first = await server.call('browser_open', {}, { key: aliceKey })
      expect(first.status).toBe(200)
      const second = await server.call('browser_open', {}, { key: aliceKey })
      expect(second.status).toBe(429)
      expect(second.body.code).toBe('rate_limited')
      expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(0)
      expect((await server.call('browser_open', {}, { key: bobKey })).status).toBe(200)
      const full = await server.call('browser_open', {}, { key: bobKey })
      expect(full.status).toBe(429)
      expect(full.body.detail).toMatch(/instance has its 2 browser sessions|1 browser sessions open/)
      // Closing one frees its place.
      await server.call('browser_close', { session_id: first.body.session_id }, { key: aliceKey })
      expect((await server.call('browser_open', {}, { key: aliceKey })).status).toBe(200)
    })
  })

  it('closes a new tab past the tab limit and reports it', { timeout: 60_000 }, async () => {
    await withServer({ TOOLPORT_BROWSER_SESSION_PAGES: '1' }, async (server) => {
      const opened = await server.call('browser_open', { url: `${site.url}/new-tab` }, { key: aliceKey })
      const ref = /link "Open the second page" \[ref=(e\d+)\]/.exec(opened.body.snapshot)?.[1]
      const clicked = await server.call('browser_click', { session_id: opened.body.session_id, ref }, { key: aliceKey })
      expect(clicked.status, JSON.stringify(clicked.body)).toBe(200)
      expect(clicked.body.tabs).toHaveLength(1)
      expect(clicked.body.blocked).toEqual([expect.objectContaining({ kind: 'Popup' })])
    })
  })
})

describe('a page opening windows in a burst', () => {
  it('keeps at most the tab limit however many windows open at once', { timeout: 60_000 }, async () => {
    await withServer({}, async (server) => {
      const opened = await server.call('browser_open', { url: `${site.url}/burst` }, { key: aliceKey })
      const id = opened.body.session_id
      const ref = refFor(opened.body.snapshot, 'button', 'Open forty windows')
      const clicked = await server.call('browser_click', { session_id: id, ref }, { key: aliceKey })
      expect(clicked.status, JSON.stringify(clicked.body).slice(0, 2000)).toBe(200)
      expect(clicked.body.tabs.length).toBeLessThanOrEqual(5)
      expect(clicked.body.blocked).toContainEqual(expect.objectContaining({ kind: 'Popup' }))
      const listed = await server.call('browser_tabs', { session_id: id }, { key: aliceKey })
      expect(listed.body.tabs.length).toBeLessThanOrEqual(5)
    })
  })
})

describe('maximum life', () => {
  it('refuses new calls on a session past its maximum life while calls keep it busy, and ends it after them', {
    timeout: 60_000,
  }, async () => {
    const browser = createChromiumBrowser({ pages: 1, log: silentLogger })
    const settings = loadSettings(browserSessionSettings, { TOOLPORT_BROWSER_SESSION_MAX_SECONDS: '60' }, 'node')
    // The sessions' clock is the test's: "later" is a number set here, not a wait.
    let clock = Date.now()
    const sessions = createBrowserSessions({
      host: () => browser.sessionHost(),
      settings,
      maxDownloadBytes: 1_000_000,
      log: silentLogger,
      now: () => clock,
    })
    try {
      const { session, summary } = await sessions.open('alice', {
        viewport: { width: 800, height: 600 },
        dialogs: 'dismiss',
        checkRequest: async () => {},
      })
      const id = summary.session_id
      // A call is running (the session is busy) when its maximum life passes.
      const running = session.waitFor({ seconds: 1 })
      clock += 61_000
      expect(() => sessions.get('alice', id)).toThrow(/maximum life of 60 s/)
      expect(sessions.open_count).toBe(1)
      await running
      // The running call settled: nothing holds the session any more.
      expect(sessions.open_count).toBe(0)
      expect(() => sessions.get('alice', id)).toThrow(/maximum life of 60 s/)
    } finally {
      await sessions.closeAll()
      await browser.close()
    }
  })
})

describe('instances', () => {
  it('names the instance in the session id; another instance answers 503 naming the holder', {
    timeout: 60_000,
  }, async () => {
    await withServer({ TOOLPORT_INSTANCE_ID: 'east1' }, async (server) => {
      const opened = await server.call('browser_open', {}, { key: aliceKey })
      expect(opened.body.session_id).toMatch(/^bs-east1-/)
      const elsewhere = opened.body.session_id.replace('bs-east1-', 'bs-west2-')
      const wrong = await server.call('browser_snapshot', { session_id: elsewhere }, { key: aliceKey })
      expect(wrong.status).toBe(503)
      expect(wrong.body).toMatchObject({ code: 'unavailable', instance: 'west2' })
      expect(wrong.body.hint).toContain('instance named in its session_id')
    })
  })

  it('refuses sessions where they cannot live (TOOLPORT_BROWSER_SESSIONS=0, as on Lambda)', async () => {
    expect(loadSettings(browserSessionSettings, { TOOLPORT_BROWSER_SESSIONS: '8' }, 'lambda').maxSessions).toBe(0)
    await withServer({ TOOLPORT_BROWSER_SESSIONS: '0' }, async (server) => {
      const refused = await server.call('browser_open', { url: `${site.url}/second` }, { key: aliceKey })
      expect(refused.status).toBe(503)
      expect(refused.body.hint).toContain('Lambda')
    })
  })
})

describe('a crashed renderer', () => {
  it('ends its own session with a clear error and leaves the others working', { timeout: 90_000 }, async () => {
    const http = createNodeHttpClient({ policy: { allowHosts: [`127.0.0.1:${site.port}`] } })
    const browser = createChromiumBrowser({ pages: 1, log: silentLogger, egress: http.resolve })
    const settings = loadSettings(browserSessionSettings, {}, 'node')
    const browserSessions = createBrowserSessions({
      host: () => browser.sessionHost(),
      settings,
      maxDownloadBytes: 1_000_000,
      log: silentLogger,
    })
    const server = await startTestServer(
      { TOOLPORT_API_KEYS: `alice=${aliceKey}`, TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${site.port}` },
      { services: { browser, browserSessions } },
    )
    try {
      const doomed = await server.call('browser_open', { url: `${site.url}/second` }, { key: aliceKey })
      const healthy = await server.call('browser_open', { url: `${site.url}/report` }, { key: aliceKey })
      expect([doomed.status, healthy.status]).toEqual([200, 200])
      const host = await browser.sessionHost()
      const target = host.browser.targets().find((candidate) => candidate.url() === `${site.url}/second`)
      const cdp = await target?.createCDPSession()
      await cdp?.send('Page.crash').catch(() => {})
      let answer = await server.call('browser_snapshot', { session_id: doomed.body.session_id }, { key: aliceKey })
      for (let tries = 0; answer.status !== 404 && tries < 50; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        answer = await server.call('browser_snapshot', { session_id: doomed.body.session_id }, { key: aliceKey })
      }
      expect(answer.status, JSON.stringify(answer.body)).toBe(404)
      expect(answer.body.detail).toContain('crashed')
      const still = await server.call('browser_snapshot', { session_id: healthy.body.session_id }, { key: aliceKey })
      expect(still.status).toBe(200)
      expect(still.body.title).toBe('Reports')
      expect((await server.call('browser_open', {}, { key: aliceKey })).status).toBe(200)
    } finally {
      await server.stop()
      await browserSessions.closeAll()
      await browser.close()
    }
  })
})
