import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createCookieWalker,
  formAction,
  hiddenField,
  MemoryOAuthClient,
  pkcePair,
  signInWithKey,
} from '../support/oauth-client'
import { freePort } from '../support/ports'
import { startTestServer, type TestServer } from '../support/server'

// The built-in authorization server (TOOLPORT_OAUTH_ISSUER=builtin) with the MCP TypeScript SDK
// client's own OAuth support: discovery, dynamic client registration, sign-in with a toolport key on
// toolport's page, consent (narrowed), the token, tools/call; then refresh rotation, reuse detection,
// revocation, and the ways a flow can be abused, each through the public endpoints.
const fullKey = 'acme-full-key-0123456789'
const readerKey = 'acme-reader-key-0123456789'
const callback = 'http://127.0.0.1:9/callback'
let server: TestServer
let publicUrl: string

beforeAll(async () => {
  const port = await freePort()
  publicUrl = `http://127.0.0.1:${port}`
  server = await startTestServer(
    {
      TOOLPORT_PUBLIC_URL: publicUrl,
      TOOLPORT_OAUTH_ISSUER: 'builtin',
      TOOLPORT_SIGNING_SECRET: 'builtin-oauth-test-secret-0123456789abcdef',
      TOOLPORT_APPROVAL: 'none',
    },
    {
      port,
      fileKeys: [
        { tenant: 'acme', key: fullKey },
        { tenant: 'acme', key: readerKey, tools: ['read_file'] },
      ],
    },
  )
})

afterAll(async () => {
  await server?.stop()
})

describe('the built-in authorization server', () => {
  it('takes the MCP SDK client through discovery, registration, sign-in with a key, consent and a tool call', async () => {
    const oauth = new MemoryOAuthClient(callback)
    const url = new URL(`${publicUrl}/mcp`)
    await expect(
      new Client({ name: 'builtin-test', version: '1.0.0' }).connect(
        new StreamableHTTPClientTransport(url, { authProvider: oauth }),
      ),
    ).rejects.toThrow(UnauthorizedError)
    const authorizationUrl = oauth.authorizationUrl as URL
    expect(authorizationUrl.href.startsWith(`${publicUrl}/oauth/`)).toBe(true)
    const { code, offered } = await signInWithKey(authorizationUrl, fullKey, callback, () => ['tools:write'])
    expect(offered).toEqual(expect.arrayContaining(['tools:read', 'tools:write']))
    const transport = new StreamableHTTPClientTransport(url, { authProvider: oauth })
    await transport.finishAuth(code)
    const client = new Client({ name: 'builtin-test', version: '1.0.0' })
    await client.connect(transport)
    const written = await client.callTool({
      name: 'write_file',
      arguments: { path: 'builtin.txt', content: 'signed in' },
    })
    expect(written.isError).toBeFalsy()
    await client.close()
    expect(await server.call('read_file', { path: 'builtin.txt' }, { key: fullKey })).toMatchObject({
      status: 200,
      body: { content: 'signed in' },
    })
  })
})

interface Endpoints {
  authorization_endpoint: string
  token_endpoint: string
  registration_endpoint: string
  revocation_endpoint: string
}

async function endpoints(): Promise<Endpoints> {
  return (await (await fetch(`${publicUrl}/oauth/.well-known/openid-configuration`)).json()) as Endpoints
}

/** A client registered by hand (RFC 7591), and an authorization URL with PKCE S256 and a resource. */
async function manualClient(scope = 'tools:read offline_access') {
  const meta = await endpoints()
  const registered = await fetch(meta.registration_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'manual client',
      redirect_uris: [callback],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }),
  })
  expect(registered.status).toBe(201)
  const clientId = ((await registered.json()) as { client_id: string }).client_id
  const { verifier, challenge } = await pkcePair()
  const authorize = (overrides: Record<string, string> = {}) => {
    const url = new URL(meta.authorization_endpoint)
    const params = {
      client_id: clientId,
      redirect_uri: callback,
      response_type: 'code',
      scope,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: `${publicUrl}/mcp`,
      state: 'state-123',
      ...overrides,
    }
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value)
    return url
  }
  const token = async (form: Record<string, string>) => {
    const response = await fetch(meta.token_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: clientId, ...form }).toString(),
    })
    return { status: response.status, body: (await response.json()) as Record<string, string> }
  }
  const exchange = (code: string, codeVerifier = verifier) =>
    token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: callback,
      code_verifier: codeVerifier,
      resource: `${publicUrl}/mcp`,
    })
  return { meta, clientId, verifier, authorize, token, exchange }
}

describe('the built-in server under abuse', () => {
  it('rotates refresh tokens, revokes the grant when an old one is reused, and honours revocation', async () => {
    const client = await manualClient()
    const { code } = await signInWithKey(client.authorize(), fullKey, callback)
    const first = await client.exchange(code)
    expect(first.status).toBe(200)
    expect(first.body.refresh_token).toBeTruthy()
    const read = await server.call('read_file', { path: 'builtin.txt' }, { key: first.body.access_token })
    expect(read.status).toBe(200)
    // A refresh returns a new access token and a new refresh token.
    const refreshed = await client.token({
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token as string,
    })
    expect(refreshed.status).toBe(200)
    expect(refreshed.body.refresh_token).not.toBe(first.body.refresh_token)
    expect((await server.call('read_file', { path: 'builtin.txt' }, { key: refreshed.body.access_token })).status).toBe(
      200,
    )
    // The old one again: refused, and the whole grant is gone with it (the newer refresh token too).
    const reused = await client.token({
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token as string,
    })
    expect(reused).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
    const after = await client.token({
      grant_type: 'refresh_token',
      refresh_token: refreshed.body.refresh_token as string,
    })
    expect(after).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })

    // Revocation (RFC 7009) of a fresh grant's refresh token.
    const second = await client.exchange((await signInWithKey(client.authorize(), fullKey, callback)).code)
    const revoked = await fetch(client.meta.revocation_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: client.clientId, token: second.body.refresh_token as string }).toString(),
    })
    expect(revoked.status).toBe(200)
    const afterRevoke = await client.token({
      grant_type: 'refresh_token',
      refresh_token: second.body.refresh_token as string,
    })
    expect(afterRevoke).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
  })

  it('takes a code once, only with its PKCE verifier, and only for the client it was issued to', async () => {
    const client = await manualClient()
    const other = await manualClient()
    const wrongVerifier = await client.exchange(
      (await signInWithKey(client.authorize(), fullKey, callback)).code,
      'x'.repeat(43),
    )
    expect(wrongVerifier).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
    const missingVerifier = await client.token({
      grant_type: 'authorization_code',
      code: (await signInWithKey(client.authorize(), fullKey, callback)).code,
      redirect_uri: callback,
    })
    expect(missingVerifier.status).toBe(400)
    const { code } = await signInWithKey(client.authorize(), fullKey, callback)
    // Another client presenting it: refused.
    expect((await other.exchange(code, client.verifier)).status).toBe(400)
    const used = await client.exchange(code)
    expect(used.status).toBe(200)
    // Replayed: refused.
    expect(await client.exchange(code)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
    // An authorization request without PKCE, or with plain, is refused.
    const browser = createCookieWalker()
    const variants: Array<Record<string, string>> = [
      { code_challenge: '', code_challenge_method: '' },
      { code_challenge_method: 'plain' },
    ]
    for (const overrides of variants) {
      const url = client.authorize(overrides)
      if (overrides.code_challenge === '') {
        url.searchParams.delete('code_challenge')
        url.searchParams.delete('code_challenge_method')
      }
      const page = await browser.follow(url, callback)
      const error = page.done ? page.url.searchParams.get('error') : 'page'
      expect(error).toBe('invalid_request')
    }
  })

  it('never redirects to an unregistered URI, and refuses an unknown client', async () => {
    const client = await manualClient()
    const browser = createCookieWalker()
    const mismatch = await browser.follow(
      client.authorize({ redirect_uri: 'https://evil.example/callback' }),
      'https://evil.example',
    )
    expect(mismatch.done).toBe(false)
    expect(mismatch.html).toMatch(/redirect_uri/)
    const unknown = await browser.follow(client.authorize({ client_id: 'no-such-client' }), callback)
    expect(unknown.done).toBe(false)
    expect(unknown.html).toMatch(/client is invalid|invalid_client/)
  })

  it("signs in only with a valid key and the page's CSRF token, and offers a key no more than it may do", async () => {
    const client = await manualClient('tools:read tools:write offline_access')
    const browser = createCookieWalker()
    const page = await browser.follow(client.authorize(), callback)
    expect(page.done).toBe(false)
    const html = (page as { html: string }).html
    const action = formAction({ url: page.url, html })
    const wrong = await browser.request(action, {
      method: 'POST',
      form: { csrf: hiddenField(html, 'csrf'), key: 'not-a-key-0123456789' },
    })
    expect(wrong.response.status).toBe(401)
    const body = await wrong.response.text()
    expect(body).toContain('That key is not valid.')
    expect(body).not.toContain('not-a-key-0123456789')
    const forged = await browser.request(action, { method: 'POST', form: { csrf: 'forged', key: fullKey } })
    expect(forged.response.status).toBe(403)
    await forged.response.arrayBuffer()
    // The reader key may call read_file only: its token carries that cap whatever scopes it was given.
    const { offered, code } = await signInWithKey(client.authorize(), readerKey, callback)
    expect(offered).toEqual(['tools:read', 'tools:write'])
    const token = await client.exchange(code)
    expect(token.body, JSON.stringify(token.body)).toMatchObject({ scope: 'tools:read tools:write' })
    const claims = JSON.parse(Buffer.from(String(token.body.access_token).split('.')[1] ?? '', 'base64url').toString())
    expect(claims).toMatchObject({ toolport_tenant: 'acme', toolport_tools: ['read_file'], aud: `${publicUrl}/mcp` })
    expect((await server.call('read_file', { path: 'builtin.txt' }, { key: token.body.access_token })).status).toBe(200)
    const write = await server.call('write_file', { path: 'no.txt', content: 'x' }, { key: token.body.access_token })
    expect(write.status).toBe(403)
    expect(write.body.error).toBeUndefined()
    // The full key, consent narrowed to reading: writing asks for the scope (step-up).
    const narrowed = await client.exchange(
      (await signInWithKey(client.authorize(), fullKey, callback, () => ['tools:read'])).code,
    )
    const stepUp = await server.call(
      'write_file',
      { path: 'no.txt', content: 'x' },
      { key: narrowed.body.access_token },
    )
    expect(stepUp).toMatchObject({ status: 403, body: { error: 'insufficient_scope', scope: 'tools:write' } })
  })

  it('serves pages that cannot be framed and load nothing from elsewhere', async () => {
    const client = await manualClient()
    const browser = createCookieWalker()
    let url = client.authorize()
    let response: Response | undefined
    for (let hop = 0; hop < 5; hop++) {
      const step = await browser.request(url)
      const location = step.response.headers.get('location')
      if (!location) {
        response = step.response
        break
      }
      await step.response.arrayBuffer()
      url = new URL(location, url)
    }
    const html = (await response?.text()) ?? ''
    const policy = response?.headers.get('content-security-policy') ?? ''
    expect(policy).toContain("frame-ancestors 'none'")
    expect(policy).toContain("default-src 'none'")
    expect(response?.headers.get('x-frame-options')).toBe('DENY')
    expect(html).not.toMatch(/(src|href)="https?:/)
    expect(html).not.toContain('<script')
    expect(html).toMatch(/<label for="key">/)
  })
})
