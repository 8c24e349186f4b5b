import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createCookieWalker, signInWithKey } from '../support/oauth-client'
import { freePort } from '../support/ports'
import { startTestServer, type TestServer } from '../support/server'

// The built-in server's operator-registered clients (TOOLPORT_OAUTH_CLIENTS), as a GPT Action uses
// one: a static id and secret typed into ChatGPT, its exact callback URL, the secret in the token
// request's body, no PKCE. And the rate limit of the token and registration endpoints.
const key = 'gpt-owner-key-0123456789'
const gptCallback = 'https://chatgpt.com/aip/g-0123456789abcdef/oauth/callback'
const gpt = {
  client_id: 'my-gpt',
  client_secret: 'gpt-client-secret-0123456789abcdef0123',
  redirect_uris: [gptCallback],
  client_name: 'Team GPT',
}
let server: TestServer
let publicUrl: string

async function start(env: Record<string, string>): Promise<{ server: TestServer; publicUrl: string }> {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const started = await startTestServer(
    {
      TOOLPORT_PUBLIC_URL: url,
      TOOLPORT_OAUTH_ISSUER: 'builtin',
      TOOLPORT_SIGNING_SECRET: 'builtin-oauth-clients-secret-0123456789abcdef',
      TOOLPORT_APPROVAL: 'none',
      ...env,
    },
    { port, fileKeys: [{ tenant: 'gpt', key }] },
  )
  return { server: started, publicUrl: url }
}

beforeAll(async () => {
  ;({ server, publicUrl } = await start({ TOOLPORT_OAUTH_CLIENTS: JSON.stringify([gpt]) }))
})

afterAll(async () => {
  await server?.stop()
})

/** The authorization URL ChatGPT builds from the Action's settings: no PKCE, no resource. */
function gptAuthorization(overrides: Record<string, string> = {}): URL {
  const url = new URL(`${publicUrl}/oauth/auth`)
  const params = {
    client_id: gpt.client_id,
    redirect_uri: gptCallback,
    response_type: 'code',
    scope: 'tools:read',
    state: 'gpt-state',
    ...overrides,
  }
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value)
  return url
}

async function token(form: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${publicUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

describe('an operator-registered client (a GPT Action)', () => {
  it('signs in without PKCE, takes its token with the secret in the body, and calls only what it was given', async () => {
    expect((await server.call('write_file', { path: 'gpt.txt', content: 'for the GPT' }, { key })).status).toBe(200)
    const { code, state, pages } = await signInWithKey(gptAuthorization(), key, gptCallback)
    expect(state).toBe('gpt-state')
    expect(pages.some((page) => page.html.includes('Team GPT'))).toBe(true)
    const wrongSecret = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: gptCallback,
      client_id: gpt.client_id,
      client_secret: 'not-the-secret-0123456789abcdef012345',
    })
    expect(wrongSecret).toMatchObject({ status: 401, body: { error: 'invalid_client' } })
    const issued = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: gptCallback,
      client_id: gpt.client_id,
      client_secret: gpt.client_secret,
    })
    expect(issued.status, JSON.stringify(issued.body)).toBe(200)
    expect(issued.body).toMatchObject({ token_type: 'Bearer', scope: 'tools:read' })
    const access = issued.body.access_token as string
    expect(await server.call('read_file', { path: 'gpt.txt' }, { key: access })).toMatchObject({
      status: 200,
      body: { content: 'for the GPT' },
    })
    const write = await server.call('write_file', { path: 'gpt.txt', content: 'x' }, { key: access })
    expect(write.status).toBe(403)
    // ChatGPT refreshes with the same secret.
    const refreshed = await token({
      grant_type: 'refresh_token',
      refresh_token: issued.body.refresh_token as string,
      client_id: gpt.client_id,
      client_secret: gpt.client_secret,
    })
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200)
  })

  it('redirects only to its registered callback, and public clients still need PKCE', async () => {
    const browser = createCookieWalker()
    const elsewhere = await browser.follow(
      gptAuthorization({ redirect_uri: 'https://chatgpt.com.evil.example/callback' }),
      'https://chatgpt.com.evil.example',
    )
    expect(elsewhere.done).toBe(false)
    expect((elsewhere as { html: string }).html).toMatch(/redirect_uri/)
    const registered = await fetch(`${publicUrl}/oauth/reg`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['http://127.0.0.1:9/cb'], token_endpoint_auth_method: 'none' }),
    })
    const clientId = ((await registered.json()) as { client_id: string }).client_id
    const noPkce = await createCookieWalker().follow(
      gptAuthorization({ client_id: clientId, redirect_uri: 'http://127.0.0.1:9/cb' }),
      'http://127.0.0.1:9/cb',
    )
    // The error goes back to the client's callback, as OAuth says for a verified redirect URI.
    expect(noPkce.done).toBe(true)
    expect(noPkce.url.searchParams.get('error')).toBe('invalid_request')
    expect(noPkce.url.searchParams.get('error_description')).toMatch(/PKCE/)
  })
})

describe('the metadata where RFC 8414 puts it', () => {
  it('sends /.well-known/oauth-authorization-server/oauth (path insertion) to the issuer’s own document', async () => {
    for (const document of ['oauth-authorization-server', 'openid-configuration']) {
      const found = await fetch(`${publicUrl}/.well-known/${document}/oauth`)
      expect(found.status).toBe(200)
      expect(found.redirected).toBe(true)
      expect(await found.json()).toMatchObject({
        issuer: `${publicUrl}/oauth`,
        token_endpoint: `${publicUrl}/oauth/token`,
      })
    }
  })
})

describe('the rate limit of the token and registration endpoints', () => {
  it('answers 429 with Retry-After past TOOLPORT_OAUTH_RATE_LIMIT, per client address', async () => {
    const limited = await start({ TOOLPORT_OAUTH_RATE_LIMIT: '3/min' })
    try {
      const statuses: number[] = []
      let last: Response | undefined
      for (let attempt = 0; attempt < 4; attempt++) {
        last = await fetch(`${limited.publicUrl}/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=authorization_code&code=nope&client_id=nobody',
        })
        statuses.push(last.status)
        if (attempt < 3) await last.arrayBuffer()
      }
      expect(statuses.slice(0, 3).every((status) => status !== 429)).toBe(true)
      expect(statuses[3]).toBe(429)
      expect(Number(last?.headers.get('retry-after'))).toBeGreaterThan(0)
      expect(await last?.json()).toMatchObject({ error: 'rate_limited' })
      // Registration shares the address's budget; the metadata and the pages do not count.
      const registration = await fetch(`${limited.publicUrl}/oauth/reg`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      })
      expect(registration.status).toBe(429)
      await registration.arrayBuffer()
      const metadata = await fetch(`${limited.publicUrl}/oauth/.well-known/openid-configuration`)
      expect(metadata.status).toBe(200)
      await metadata.arrayBuffer()
    } finally {
      await limited.server.stop()
    }
  })
})
