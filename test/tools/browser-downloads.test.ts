import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { refFor, startBrowserSite } from '../support/browser-site'
import { type LocalWeb, startLocalWeb } from '../support/local-web'
import { startTestServer, type TestServer } from '../support/server'

/**
 * Downloads belong to the session whose page started them: every session of the shared Chromium
 * hears the browser's download events, but takes only those begun in a frame of its own context.
 * The last download stays the session's answer to browser_download without a ref, also once saved.
 */
const aliceKey = 'alice-browser-key-0123456789'
const bobKey = 'bob-browser-key-0123456789'

let victim: LocalWeb
let site: LocalWeb
let server: TestServer

beforeAll(async () => {
  victim = await startLocalWeb({})
  site = await startBrowserSite(victim.port)
  // A short action deadline: waiting for a download that never comes ends within it (504).
  server = await startTestServer({
    TOOLPORT_API_KEYS: `alice=${aliceKey},bob=${bobKey}`,
    TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${site.port}`,
    TOOLPORT_BROWSER_ACTION_SECONDS: '3',
  })
})
afterAll(async () => {
  await server?.stop()
  await site?.stop()
  await victim?.stop()
})

describe('downloads of two sessions', () => {
  it("never shows one tenant's download to another tenant's session", { timeout: 60_000 }, async () => {
    const alice = await server.call('browser_open', { url: `${site.url}/report` }, { key: aliceKey })
    const bob = await server.call('browser_open', { url: `${site.url}/report` }, { key: bobKey })
    expect([alice.status, bob.status]).toEqual([200, 200])
    const downloaded = await server.call(
      'browser_download',
      { session_id: alice.body.session_id, ref: refFor(alice.body.snapshot, 'link', 'Download the report') },
      { key: aliceKey },
    )
    expect(downloaded.status, JSON.stringify(downloaded.body)).toBe(200)
    expect(downloaded.body.files[0].path).toMatch(/report.*\.csv$/)

    const other = await server.call('browser_download', { session_id: bob.body.session_id }, { key: bobKey })
    expect(other.status, JSON.stringify(other.body)).toBe(504)
    expect(other.body.detail).toBe('No download finished in time.')
    expect(JSON.stringify(other.body)).not.toContain('report')
  })
})

describe('the last download', () => {
  it('is saved again by browser_download without a ref after a download by ref', { timeout: 60_000 }, async () => {
    const opened = await server.call('browser_open', { url: `${site.url}/report` }, { key: aliceKey })
    const id = opened.body.session_id
    const ref = refFor(opened.body.snapshot, 'link', 'Download the report')
    const first = await server.call(
      'browser_download',
      { session_id: id, ref, output_path: 'first.csv' },
      { key: aliceKey },
    )
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    const again = await server.call('browser_download', { session_id: id, output_path: 'again.csv' }, { key: aliceKey })
    expect(again.status, JSON.stringify(again.body)).toBe(200)
    expect(again.body.files[0]).toMatchObject({ path: 'again.csv', size: 25 })
    const saved = await server.call('read_file', { path: 'again.csv' }, { key: aliceKey })
    expect(saved.body.content).toBe('id,total\n1,10.00\n2,20.00\n')
  })
})
