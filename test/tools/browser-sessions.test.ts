import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { refFor, startBrowserSite } from '../support/browser-site'
import { type LocalWeb, startLocalWeb } from '../support/local-web'
import { type CallResult, startTestServer, type TestServer } from '../support/server'

/**
 * Browser sessions over REST against the test site on 127.0.0.1 (opened through
 * TOOLPORT_FETCH_ALLOW_HOSTS): log in, read the table's second page, upload a file, download a
 * report into the workspace, follow a link into a new tab, and show every blocked request blocked and
 * reported while a second loopback server records that nothing reached it.
 */
let victim: LocalWeb
let site: LocalWeb
let server: TestServer

beforeAll(async () => {
  victim = await startLocalWeb({})
  site = await startBrowserSite(victim.port)
  server = await startTestServer({ TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${site.port}` })
})
afterAll(async () => {
  await server?.stop()
  await site?.stop()
  await victim?.stop()
})

async function ok(tool: string, body: unknown): Promise<CallResult['body']> {
  const result = await server.call(tool, body)
  expect(result.status, `${tool}: ${JSON.stringify(result.body).slice(0, 2000)}`).toBe(200)
  return result.body
}

describe('a browser session over REST', () => {
  it('logs in, reads the second page of the table, and keeps the cookie across pages', {
    timeout: 60_000,
  }, async () => {
    const opened = await ok('browser_open', { url: `${site.url}/login` })
    const id = opened.session_id
    expect(id).toMatch(/^bs-[a-z0-9]+-[a-f0-9]{24}$/)
    expect(opened).toMatchObject({ title: 'Login', url: `${site.url}/login`, blocked: [], dialogs: [] })
    expect(opened.snapshot).toContain('- heading "Sign in" [level=1]')
    await ok('browser_type', { session_id: id, ref: refFor(opened.snapshot, 'textbox', 'User name'), text: 'alice' })
    await ok('browser_type', {
      session_id: id,
      ref: refFor(opened.snapshot, 'textbox', 'Password'),
      text: 'wonderland',
    })
    const account = await ok('browser_click', {
      session_id: id,
      element: 'Sign in button',
      ref: refFor(opened.snapshot, 'button', 'Sign in'),
    })
    expect(account.url).toBe(`${site.url}/account`)
    expect(account.snapshot).toContain('Welcome, alice')
    const first = await ok('browser_click', { session_id: id, ref: refFor(account.snapshot, 'link', 'Your orders') })
    expect(first.title).toBe('Orders page 1')
    const second = await ok('browser_click', { session_id: id, ref: refFor(first.snapshot, 'link', 'Next page') })
    expect(second.title).toBe('Orders page 2')
    expect(second.snapshot).toContain('Item 6')
    expect(second.snapshot).toContain('Item 10')
    expect(second.snapshot).not.toContain('Item 5"')
    await ok('browser_close', { session_id: id })
  })
})

describe('frames', () => {
  it('shows a frame of the page in the snapshot, and its fields take refs like any other', {
    timeout: 60_000,
  }, async () => {
    const framed = await ok('browser_open', { url: `${site.url}/framed` })
    const id = framed.session_id
    expect(framed.snapshot).toMatch(/- Iframe[^\n]*\n\s+- heading "Sign in"/)
    await ok('browser_type', { session_id: id, ref: refFor(framed.snapshot, 'textbox', 'User name'), text: 'alice' })
    await ok('browser_type', {
      session_id: id,
      ref: refFor(framed.snapshot, 'textbox', 'Password'),
      text: 'wonderland',
    })
    await ok('browser_click', { session_id: id, ref: refFor(framed.snapshot, 'button', 'Sign in') })
    const after = await ok('browser_wait_for', { session_id: id, text: 'Welcome, alice', time: 10 })
    expect(after.url).toBe(`${site.url}/framed`)
    expect(after.snapshot).toContain('Welcome, alice')
    await ok('browser_close', { session_id: id })
  })
})

describe('files in and out of a session', () => {
  it('uploads a workspace file through a form with a select', { timeout: 60_000 }, async () => {
    await ok('write_file', { path: 'docs/note.txt', content: 'twelve bytes' })
    const form = await ok('browser_open', { url: `${site.url}/form` })
    const id = form.session_id
    await ok('browser_select_option', {
      session_id: id,
      ref: refFor(form.snapshot, 'combobox', 'Colour'),
      values: ['Green'],
    })
    const chosen = await ok('browser_file_upload', {
      session_id: id,
      ref: refFor(form.snapshot, 'button', 'Document'),
      paths: ['docs/note.txt'],
    })
    const sent = await ok('browser_click', { session_id: id, ref: refFor(chosen.snapshot, 'button', 'Send') })
    expect(sent.snapshot).toContain('Received note.txt (12 bytes), colour green')
    const outside = await server.call('browser_file_upload', {
      session_id: id,
      ref: 'e1',
      paths: ['../../etc/passwd'],
    })
    expect(outside.status).toBe(400)
    await ok('browser_close', { session_id: id })
  })

  it('downloads a report into the workspace, and takes screenshots and PDFs there', { timeout: 60_000 }, async () => {
    const reports = await ok('browser_open', { url: `${site.url}/report` })
    const id = reports.session_id
    const downloaded = await ok('browser_download', {
      session_id: id,
      ref: refFor(reports.snapshot, 'link', 'Download the report'),
      output_path: 'reports/orders.csv',
    })
    expect(downloaded.files[0]).toMatchObject({ path: 'reports/orders.csv', size: 25 })
    expect((await ok('read_file', { path: 'reports/orders.csv' })).content).toBe('id,total\n1,10.00\n2,20.00\n')
    // The page names the file, never where it goes: a name that climbs out lands under outputs/.
    const named = await ok('browser_download', {
      session_id: id,
      ref: refFor(reports.snapshot, 'link', 'Download another'),
    })
    expect(named.files[0].path).toMatch(/^outputs\/[a-z0-9-]*evil-[^/]+\.csv$/)
    const climbing = await server.call('browser_download', {
      session_id: id,
      ref: refFor(reports.snapshot, 'link', 'Download the report'),
      output_path: '../outside.csv',
    })
    expect(climbing.status, JSON.stringify(climbing.body)).toBe(400)
    const shot = await ok('browser_screenshot', { session_id: id, output_path: 'shots/report.png' })
    expect(shot.files[0]).toMatchObject({ path: 'shots/report.png', mime_type: 'image/png' })
    // Over REST the result stays compact: a link, not the picture.
    expect(shot.image).toBeUndefined()
    const pixels = new Uint8Array(await (await fetch(shot.files[0].url)).arrayBuffer())
    expect([...pixels.subarray(1, 4)]).toEqual([0x50, 0x4e, 0x47])
    const pdf = await ok('browser_pdf', { session_id: id })
    expect(pdf.files[0].mime_type).toBe('application/pdf')
    await ok('browser_close', { session_id: id })
  })
})

describe('what a session may not reach', () => {
  it('blocks and reports a redirect to a loopback port, a script reaching for metadata and another port, and other schemes', {
    timeout: 60_000,
  }, async () => {
    const opened = await ok('browser_open', { url: `${site.url}/new-tab` })
    const id = opened.session_id
    const redirected = await server.call('browser_navigate', { session_id: id, url: `${site.url}/to-blocked` })
    expect(redirected.status, JSON.stringify(redirected.body)).toBe(403)
    expect(redirected.body.detail).toContain(`127.0.0.1:${victim.port}`)
    expect(redirected.body.blocked[0]).toMatchObject({
      url: `http://127.0.0.1:${victim.port}/redirected`,
      kind: 'Document',
    })

    const sneaky = await ok('browser_navigate', { session_id: id, url: `${site.url}/sneaky` })
    const blockedUrls = sneaky.blocked.map((request: { url: string }) => request.url)
    expect(blockedUrls).toEqual(
      expect.arrayContaining([
        'http://169.254.169.254/latest/meta-data/',
        `http://127.0.0.1:${victim.port}/from-script`,
        `http://127.0.0.1:${victim.port}/pixel.png`,
      ]),
    )
    expect(sneaky.hint).toContain('refused')
    expect(sneaky.blocked).toContainEqual(
      expect.objectContaining({ url: `ws://127.0.0.1:${victim.port}/socket`, kind: 'WebSocket' }),
    )

    // Windows the page opens live on as tabs, under the same checks (popups, and a window scripted by its opener).
    const popups = await ok('browser_navigate', { session_id: id, url: `${site.url}/popups` })
    const popupBlocked = popups.blocked.map((request: { url: string }) => request.url)
    expect(popupBlocked).toEqual(
      expect.arrayContaining([`http://127.0.0.1:${victim.port}/popup`, `http://127.0.0.1:${victim.port}/popup-fetch`]),
    )
    expect(popups.tabs.length).toBeGreaterThan(1)

    for (const url of ['file:///etc/passwd', 'chrome://version', 'javascript:alert(1)', 'http://169.254.169.254/']) {
      const refused = await server.call('browser_navigate', { session_id: id, url })
      expect([400, 403], `${url}: ${JSON.stringify(refused.body)}`).toContain(refused.status)
    }
    const local = await ok('browser_navigate', { session_id: id, url: `${site.url}/local-file` })
    await server.call('browser_click', { session_id: id, ref: refFor(local.snapshot, 'link', 'passwords') })
    const after = await ok('browser_snapshot', { session_id: id })
    expect(after.url).toBe(`${site.url}/local-file`)
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(victim.hits).toEqual([])
    expect(victim.connections).toBe(0)
    await ok('browser_close', { session_id: id })
  })
})

describe('tabs, dialogs, console and waiting', () => {
  it('follows a link into a new tab, lists and selects tabs, and closes one', { timeout: 60_000 }, async () => {
    const opened = await ok('browser_open', { url: `${site.url}/new-tab` })
    const id = opened.session_id
    const clicked = await ok('browser_click', { session_id: id, ref: refFor(opened.snapshot, 'link', 'second page') })
    expect(clicked.tabs).toHaveLength(2)
    expect(clicked).toMatchObject({ title: 'Second tab', url: `${site.url}/second` })
    expect(clicked.tabs[1]).toMatchObject({ current: true, title: 'Second tab' })
    const back = await ok('browser_tabs', { session_id: id, action: 'select', index: 0 })
    expect(back.title).toBe('Links')
    const closed = await ok('browser_close', { session_id: id, tab: 1 })
    expect(closed).toMatchObject({ closed: 'tab' })
    expect(closed.tabs).toHaveLength(1)
    expect((await server.call('browser_tabs', { session_id: id, action: 'select', index: 5 })).status).toBe(400)
    await ok('browser_close', { session_id: id })
  })

  it('dismisses dialogs by default and reports them; keeps console messages; waits for text', {
    timeout: 60_000,
  }, async () => {
    const opened = await ok('browser_open', { url: `${site.url}/dialogs` })
    const id = opened.session_id
    const asked = await ok('browser_click', { session_id: id, ref: refFor(opened.snapshot, 'button', 'Ask') })
    expect(asked.dialogs).toEqual([
      { type: 'alert', message: 'Hello there', action: 'dismissed' },
      { type: 'confirm', message: 'Are you sure?', action: 'dismissed' },
    ])
    expect(asked.snapshot).toContain('cancelled')
    await ok('browser_navigate', { session_id: id, url: `${site.url}/console` })
    const messages = (await ok('browser_console', { session_id: id })).messages
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'log', text: 'hello from the page' }),
        expect.objectContaining({ type: 'error', text: 'something broke' }),
      ]),
    )
    await ok('browser_navigate', { session_id: id, url: `${site.url}/slow-text` })
    const ready = await ok('browser_wait_for', { session_id: id, text: 'Ready now', time: 10 })
    expect(ready.snapshot).toContain('Ready now')
    const gone = await server.call('browser_wait_for', { session_id: id, text_gone: 'Ready now', time: 1 })
    expect(gone.status).toBe(504)
    expect((await server.call('browser_evaluate', { session_id: id, expression: 'document.title' })).status).toBe(403)
    await ok('browser_close', { session_id: id })
  })
})

describe('a page that would keep the session', () => {
  it('lets a navigation leave a page whose beforeunload handler asks to stay, and reports it', {
    timeout: 60_000,
  }, async () => {
    const opened = await ok('browser_open', { url: `${site.url}/leave` })
    const id = opened.session_id
    // Chromium asks beforeunload only of a page the user touched.
    await ok('browser_click', { session_id: id, ref: refFor(opened.snapshot, 'button', 'Touch') })
    const left = await ok('browser_navigate', { session_id: id, url: `${site.url}/second` })
    expect(left).toMatchObject({ url: `${site.url}/second`, title: 'Second tab' })
    expect(left.dialogs).toEqual([expect.objectContaining({ type: 'beforeunload', action: 'accepted' })])
    await ok('browser_close', { session_id: id })
  })
})

describe('screenshots of a tall page', () => {
  it('refuses a full-page JPEG past 65,535 px with 413 and stores nothing; the viewport still works', {
    timeout: 60_000,
  }, async () => {
    const opened = await ok('browser_open', { url: `${site.url}/tall` })
    const id = opened.session_id
    const jpeg = await server.call('browser_screenshot', {
      session_id: id,
      full_page: true,
      format: 'jpeg',
      output_path: 'shots/tall.jpg',
    })
    expect(jpeg.status, JSON.stringify(jpeg.body)).toBe(413)
    expect(jpeg.body.detail).toContain('65,535 px')
    expect((await server.call('read_file', { path: 'shots/tall.jpg' })).status).toBe(404)
    const viewport = await ok('browser_screenshot', { session_id: id, format: 'jpeg', output_path: 'shots/top.jpg' })
    expect(viewport.files[0].size).toBeGreaterThan(0)
    await ok('browser_close', { session_id: id })
  })
})

describe('refs', () => {
  it('answers 409 with a hint for a ref of a page that is gone, and 400 for one that is not a ref', {
    timeout: 60_000,
  }, async () => {
    const opened = await ok('browser_open', { url: `${site.url}/login` })
    const id = opened.session_id
    const button = refFor(opened.snapshot, 'button', 'Sign in')
    await ok('browser_navigate', { session_id: id, url: `${site.url}/report` })
    const stale = await server.call('browser_click', { session_id: id, ref: button })
    expect(stale.status, JSON.stringify(stale.body)).toBe(409)
    expect(stale.body).toMatchObject({ code: 'conflict', field: 'ref' })
    expect(stale.body.hint).toContain('browser_snapshot')
    for (const ref of ['button', 'e-1', '#submit', 'e99999999']) {
      const bad = await server.call('browser_click', { session_id: id, ref })
      expect([400, 409], `${ref}: ${JSON.stringify(bad.body)}`).toContain(bad.status)
    }
    const typedIntoLink = await server.call('browser_type', {
      session_id: id,
      ref: refFor((await ok('browser_snapshot', { session_id: id })).snapshot, 'link', 'Download'),
      text: 'x',
    })
    expect(typedIntoLink.status).toBe(409)
    await ok('browser_close', { session_id: id })
  })
})
