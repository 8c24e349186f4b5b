import { mkdir } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import { join, resolve } from 'node:path'
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Browser, HTTPResponse, Page } from 'puppeteer-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromiumArgs, extractChromium } from '../../src/browser/extract'
import { MemoryOAuthClient } from '../support/oauth-client'
import { freePort } from '../support/ports'
import { startTestServer, type TestServer } from '../support/server'

// The built-in authorization server with the MCP SDK client's own OAuth, where a real Chromium (the
// project's @sparticuz/chromium) is the person's browser: sign-in and consent are done with the keyboard
// only, so the pages are proven keyboard-usable; the browser may reach toolport and the client's
// callback and nothing else. Then an access token outlives its 10 s life, the SDK refreshes it, and a
// revoked refresh token is refused. TOOLPORT_SCREENSHOTS=<dir> saves the two pages as PNGs (docs/images).
const fullKey = 'acme-browser-key-0123456789'
const screenshots = process.env.TOOLPORT_SCREENSHOTS
let server: TestServer
let publicUrl: string
let browser: Browser
let callbackServer: Server
let callback: string
/** Codes the client's callback received, in order. */
const codes: string[] = []

beforeAll(async () => {
  const port = await freePort()
  publicUrl = `http://127.0.0.1:${port}`
  server = await startTestServer(
    {
      TOOLPORT_PUBLIC_URL: publicUrl,
      TOOLPORT_OAUTH_ISSUER: 'builtin',
      TOOLPORT_SIGNING_SECRET: 'builtin-browser-test-secret-0123456789abcdef',
      TOOLPORT_APPROVAL: 'none',
      // The least life an access token may have, and a small tolerance, so the test sees one expire.
      TOOLPORT_OAUTH_ACCESS_TOKEN_SECONDS: '10',
      TOOLPORT_OAUTH_CLOCK_SKEW_SECONDS: '1',
    },
    { port, fileKeys: [{ tenant: 'acme', key: fullKey }] },
  )
  // The client's redirect URI: a page of its own on loopback that keeps the code (and loads nothing).
  callbackServer = createServer((request, response) => {
    const code = new URL(request.url ?? '/', 'http://127.0.0.1').searchParams.get('code')
    if (code) codes.push(code)
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    response.end('<!doctype html><title>done</title><p>Signed in; you may close this window.</p>')
  })
  await new Promise<void>((done) => callbackServer.listen(0, '127.0.0.1', done))
  callback = `http://127.0.0.1:${(callbackServer.address() as { port: number }).port}/callback`
  const puppeteer = await import('puppeteer-core')
  browser = await puppeteer.launch({
    executablePath: await extractChromium(),
    args: await chromiumArgs(),
    headless: 'shell',
  })
})

afterAll(async () => {
  await browser?.close()
  await new Promise((done) => callbackServer?.close(done))
  await server?.stop()
})

/** What has the focus: its id, or its type and value (a checkbox, a button). */
const focused = (page: Page) =>
  page.evaluate(() => {
    const element = document.activeElement as HTMLInputElement | HTMLButtonElement | null
    return element?.id || `${element?.tagName.toLowerCase()}:${element?.getAttribute('value') ?? ''}`
  })

/** Presses a key that submits a form, and waits for where the browser lands after the redirects. */
async function submitWith(page: Page, key: 'Enter' | 'Space'): Promise<void> {
  await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.keyboard.press(key)])
}

async function shoot(page: Page, name: string): Promise<void> {
  if (!screenshots) return
  await mkdir(resolve(screenshots), { recursive: true })
  await page.screenshot({ path: join(resolve(screenshots), name) as `${string}.png`, fullPage: true })
}

async function metadata() {
  return (await (await fetch(`${publicUrl}/oauth/.well-known/openid-configuration`)).json()) as {
    token_endpoint: string
    revocation_endpoint: string
  }
}

/** The token endpoint's answer to a refresh, as any client would send it. */
async function refreshWith(token: string, clientId: string) {
  const meta = await metadata()
  const response = await fetch(meta.token_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      client_id: clientId,
      refresh_token: token,
      resource: `${publicUrl}/mcp`,
    }).toString(),
  })
  return { status: response.status, body: (await response.json()) as Record<string, string> }
}

describe('the built-in authorization server in a real browser', () => {
  it('signs in and consents by keyboard only, loads nothing from elsewhere, and refreshes after expiry', async () => {
    const oauth = new MemoryOAuthClient(callback)
    const url = new URL(`${publicUrl}/mcp`)
    await expect(
      new Client({ name: 'browser-test', version: '1.0.0' }).connect(
        new StreamableHTTPClientTransport(url, { authProvider: oauth }),
      ),
    ).rejects.toThrow(UnauthorizedError)
    const authorizationUrl = oauth.authorizationUrl as URL
    expect(authorizationUrl.href.startsWith(`${publicUrl}/oauth/`)).toBe(true)

    const context = await browser.createBrowserContext()
    const page = await context.newPage()
    await page.setViewport({ width: 800, height: 640 })
    const requested: string[] = []
    const pages: HTTPResponse[] = []
    page.on('request', (request) => requested.push(request.url()))
    page.on('response', (response) => {
      if (response.request().resourceType() === 'document' && response.url().startsWith(`${publicUrl}/oauth/`))
        pages.push(response)
    })

    // Sign-in: the key field has the focus as the page opens (autofocus); type the key, Enter.
    await page.goto(authorizationUrl.href, { waitUntil: 'load' })
    expect(await page.$eval('h1', (heading) => heading.textContent)).toBe('Sign in to toolport')
    expect(await focused(page)).toBe('key')
    await page.keyboard.type(fullKey)
    await shoot(page, 'oauth-sign-in.png')
    await submitWith(page, 'Enter')

    // Consent: the first scope has the focus; Tab walks the boxes in order and then reaches Allow.
    expect(await page.$eval('h1', (heading) => heading.textContent)).toMatch(/^Allow /)
    const offered = await page.$$eval('input[name="scope"]', (boxes) =>
      boxes.map((box) => (box as HTMLInputElement).value),
    )
    expect(offered).toEqual(expect.arrayContaining(['tools:read', 'tools:write']))
    // Narrowed by keyboard: Space unticks the scope the calls below do not need.
    const dropped = offered.includes('tools:destructive') ? 'tools:destructive' : 'tools:external'
    expect(offered).toContain(dropped)
    await shoot(page, 'oauth-consent.png')
    const order: string[] = []
    for (let step = 0; step <= offered.length; step++) {
      const at = await focused(page)
      order.push(at)
      if (at === 'button:allow') break
      if (at === `input:${dropped}`) await page.keyboard.press('Space')
      await page.keyboard.press('Tab')
    }
    expect(order).toEqual([...offered.map((scope) => `input:${scope}`), 'button:allow'])
    expect(await page.$eval(`input[value="${dropped}"]`, (box) => (box as HTMLInputElement).checked)).toBe(false)
    await submitWith(page, 'Space')

    // The browser ended at the client's callback with a code; on the way it asked toolport only.
    expect(page.url().startsWith(`${callback}?`)).toBe(true)
    expect(codes).toHaveLength(1)
    const elsewhere = requested.filter((href) => new URL(href).origin !== publicUrl)
    expect(elsewhere).toEqual([expect.stringMatching(`^${callback}\\?`)])
    // Both pages (sign-in, consent) refuse to be framed and load nothing the policy does not name.
    const policies = pages.filter((response) => response.status() === 200).map((response) => response.headers())
    expect(policies).toHaveLength(2)
    for (const headers of policies) {
      expect(headers['content-security-policy']).toContain("frame-ancestors 'none'")
      expect(headers['content-security-policy']).toContain("default-src 'none'")
    }
    await context.close()

    // The SDK takes the code to the token endpoint; its token carries what was ticked, not `dropped`.
    const transport = new StreamableHTTPClientTransport(url, { authProvider: oauth })
    await transport.finishAuth(codes[0] as string)
    const granted = String(oauth.saved?.scope).split(' ')
    expect(granted).toEqual(expect.arrayContaining(['tools:read', 'tools:write']))
    expect(granted).not.toContain(dropped)
    const client = new Client({ name: 'browser-test', version: '1.0.0' })
    await client.connect(transport)
    const written = await client.callTool({ name: 'write_file', arguments: { path: 'browser.txt', content: 'typed' } })
    expect(written.isError).toBeFalsy()
    const read = await client.callTool({ name: 'read_file', arguments: { path: 'browser.txt' } })
    expect(JSON.stringify(read.structuredContent ?? read.content)).toContain('typed')

    // Past its life the access token is refused (polled: no assumption about how long that takes).
    const before = { ...oauth.saved } as { access_token: string; refresh_token: string }
    expect(before.refresh_token).toBeTruthy()
    for (;;) {
      const probe = await server.call('read_file', { path: 'browser.txt' }, { key: before.access_token })
      if (probe.status === 401) break
      expect(probe.status).toBe(200)
      await new Promise((done) => setTimeout(done, 500))
    }
    // The SDK's next call gets that 401, refreshes (rotating both tokens) and goes through.
    const again = await client.callTool({ name: 'read_file', arguments: { path: 'browser.txt' } })
    expect(again.isError).toBeFalsy()
    expect(JSON.stringify(again.structuredContent ?? again.content)).toContain('typed')
    const after = oauth.saved as { access_token: string; refresh_token: string }
    expect(after.access_token).not.toBe(before.access_token)
    expect(after.refresh_token).toBeTruthy()
    expect(after.refresh_token).not.toBe(before.refresh_token)
    await client.close()

    // Revoked (RFC 7009, as this public client), the current refresh token no longer refreshes.
    const clientId = oauth.information?.client_id as string
    const revoked = await fetch((await metadata()).revocation_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: clientId, token: after.refresh_token }).toString(),
    })
    expect(revoked.status).toBe(200)
    expect(await refreshWith(after.refresh_token, clientId)).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant' },
    })
  }, 180_000)
})
