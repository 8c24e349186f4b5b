import type { Server } from 'node:http'
import { exportJWK, generateKeyPair } from 'jose'
import Provider from 'oidc-provider'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { allowScopes, createCookieWalker, formAction, pkcePair } from '../support/oauth-client'
import { freePort } from '../support/ports'
import { startTestServer, type TestServer } from '../support/server'

// The built-in server signing people in through the operator's OpenID Connect provider
// (TOOLPORT_OAUTH_UPSTREAM_*): a real provider (oidc-provider, started here, with its development
// login form) plays Keycloak or Entra. A person picks "Sign in with Example SSO" on toolport's page,
// signs in there, comes back, consents on toolport's page, and the client's token acts for the tenant
// the provider's claim names, with no more than the operator's upstream scopes.
const callback = 'http://127.0.0.1:9/upstream-client-callback'
const acmeKey = 'acme-key-upstream-0123456789'
let server: TestServer
let upstream: Server
let publicUrl: string
/** Every line the service logged (access log, warnings), to check that no code or token is among them. */
const logged: string[] = []
const capture = (message: string, fields?: Record<string, unknown>) => {
  logged.push(`${message} ${JSON.stringify(fields ?? {})}`)
}

beforeAll(async () => {
  const [port, upstreamPort] = [await freePort(), await freePort()]
  publicUrl = `http://127.0.0.1:${port}`
  const issuer = `http://127.0.0.1:${upstreamPort}`
  const { privateKey } = await generateKeyPair('RS256', { extractable: true })
  const oidc = new Provider(issuer, {
    clients: [
      {
        client_id: 'toolport',
        client_secret: 'upstream-client-secret-0123456789',
        redirect_uris: [`${publicUrl}/oauth/upstream/callback`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'upstream-key', alg: 'RS256', use: 'sig' }] },
    cookies: { keys: ['upstream-cookie-key'] },
    features: { devInteractions: { enabled: true } },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['team'] },
    // As Google, Entra and Keycloak do: the requested claims in the ID token itself.
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    // The development login takes any name: the name is the address, its domain's first label the team.
    findAccount: (_context, sub) => ({
      accountId: sub,
      claims: async () => ({
        sub,
        email: sub,
        email_verified: true,
        team: sub.endsWith('@example.com') ? 'acme' : 'elsewhere',
      }),
    }),
  })
  upstream = oidc.listen(upstreamPort, '127.0.0.1')
  server = await startTestServer(
    {
      TOOLPORT_PUBLIC_URL: publicUrl,
      TOOLPORT_OAUTH_ISSUER: 'builtin',
      TOOLPORT_SIGNING_SECRET: 'upstream-test-signing-secret-0123456789abcdef',
      TOOLPORT_APPROVAL: 'none',
      TOOLPORT_OAUTH_UPSTREAM_ISSUER: issuer,
      TOOLPORT_OAUTH_UPSTREAM_CLIENT_ID: 'toolport',
      TOOLPORT_OAUTH_UPSTREAM_CLIENT_SECRET: 'upstream-client-secret-0123456789',
      TOOLPORT_OAUTH_UPSTREAM_NAME: 'Example SSO',
      TOOLPORT_OAUTH_UPSTREAM_TENANT_CLAIM: 'team',
      TOOLPORT_OAUTH_UPSTREAM_ALLOW: '@example.com',
      TOOLPORT_OAUTH_UPSTREAM_SCOPES: 'tools:read,tools:write',
    },
    { port, fileKeys: [{ tenant: 'acme', key: acmeKey }], log: { info: capture, warn: capture, error: capture } },
  )
})

afterAll(async () => {
  await server?.stop()
  await new Promise((resolve) => upstream?.close(resolve))
})

/** A client registered at toolport, and an authorization URL with PKCE asking for `scope`. */
async function client(scope: string) {
  const registered = await fetch(`${publicUrl}/oauth/reg`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'SSO client', redirect_uris: [callback], token_endpoint_auth_method: 'none' }),
  })
  const clientId = ((await registered.json()) as { client_id: string }).client_id
  const { verifier, challenge } = await pkcePair()
  const url = new URL(`${publicUrl}/oauth/auth`)
  const params = {
    client_id: clientId,
    redirect_uri: callback,
    response_type: 'code',
    scope,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    resource: `${publicUrl}/mcp`,
  }
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value)
  return { clientId, verifier, url }
}

type Walk = { done: boolean; url: URL; html?: string }

/** A person choosing the upstream provider on toolport's page and signing in there as `login`. */
async function signInUpstream(start: URL, login: string, browser = createCookieWalker()) {
  const seen: Walk[] = []
  let offered: string[] = []
  let page: Walk = await browser.follow(start, callback)
  for (let step = 0; step < 6 && !page.done; step++) {
    seen.push(page)
    const html = page.html ?? ''
    const link = /<a class="button" href="([^"]+)"[^>]*>Sign in with Example SSO<\/a>/.exec(html)?.[1]
    if (link) page = await browser.follow(new URL(link, page.url), callback)
    else if (html.includes('name="login"'))
      page = await browser.follow(formAction({ url: page.url, html }), callback, {
        method: 'POST',
        form: { prompt: 'login', login, password: 'any' },
      })
    else if (html.includes('name="prompt" value="consent"'))
      page = await browser.follow(formAction({ url: page.url, html }), callback, {
        method: 'POST',
        form: { prompt: 'consent' },
      })
    else if (html.includes('name="scope"')) {
      offered = [...html.matchAll(/name="scope" value="([^"]+)"/g)].map((match) => match[1] as string)
      page = await allowScopes(browser, page.url, html, offered, callback)
    } else break
  }
  return { page, offered, seen }
}

describe('sign-in through the operator’s OpenID Connect provider', () => {
  it('signs a person in upstream, consents on toolport’s page, and acts for the tenant the provider names', async () => {
    const { clientId, verifier, url } = await client('tools:read tools:write tools:destructive admin')
    const { page, offered, seen } = await signInUpstream(url, 'ada@example.com')
    expect(seen[0]?.html).toContain('Your toolport key')
    expect(page.done, page.html?.slice(0, 400)).toBe(true)
    // Only what the operator lets upstream people give, however much the client asked for.
    expect(offered).toEqual(['tools:read', 'tools:write'])
    const token = await fetch(`${publicUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: clientId,
        code: page.url.searchParams.get('code') ?? '',
        redirect_uri: callback,
        code_verifier: verifier,
        resource: `${publicUrl}/mcp`,
      }).toString(),
    })
    const body = (await token.json()) as Record<string, string>
    expect(token.status, JSON.stringify(body)).toBe(200)
    const claims = JSON.parse(Buffer.from(String(body.access_token).split('.')[1] ?? '', 'base64url').toString())
    expect(claims).toMatchObject({ toolport_tenant: 'acme' })
    expect(JSON.stringify(claims)).not.toContain('ada@example.com')
    const written = await server.call(
      'write_file',
      { path: 'sso.txt', content: 'from sso' },
      { key: body.access_token },
    )
    expect(written.status).toBe(200)
    // The same tenant as acme's key: the file is there for it.
    expect(await server.call('read_file', { path: 'sso.txt' }, { key: acmeKey })).toMatchObject({
      status: 200,
      body: { content: 'from sso' },
    })
    // The access log saw every step, and none of the secrets that passed through them.
    expect(logged.some((line) => line.includes('/oauth/upstream/callback'))).toBe(true)
    const secrets = [page.url.searchParams.get('code'), body.access_token, 'ada@example.com'].filter(
      (secret): secret is string => typeof secret === 'string' && secret.length > 0,
    )
    expect(secrets).toHaveLength(3)
    for (const secret of secrets) expect(logged.join('\n')).not.toContain(secret)
    // Nor the query strings that carry codes and states (the provider's return among them).
    expect(logged.join('\n')).not.toMatch(/[?&](code|state)=/)
    // The tenant's audit log keeps the sign-in, naming the person by digest only.
    const audited = await server.audit?.page('acme', { limit: 10, filter: { action: 'auth.signed_in' } })
    expect(audited?.records[0]).toMatchObject({
      principal: expect.stringMatching(/^sso-[A-Za-z0-9_-]{22}$/),
      target: clientId,
      details: { method: 'upstream', provider: 'Example SSO' },
    })
  })

  it('refuses people outside TOOLPORT_OAUTH_UPSTREAM_ALLOW, and a return to another browser or with a forged state', async () => {
    const outsider = await signInUpstream((await client('tools:read')).url, 'eve@elsewhere.org')
    expect(outsider.page.done).toBe(false)
    expect(outsider.page.html).toContain('may not use this toolport')
    const refused = await server.audit?.page('_service', { limit: 10, filter: { action: 'auth.sign_in_refused' } })
    expect(refused?.records[0]).toMatchObject({ outcome: 'refused', details: { method: 'upstream' } })
    // The provider's redirect back, replayed in a browser that did not start the sign-in.
    const browser = createCookieWalker()
    const { url } = await client('tools:read')
    let page: Walk = await browser.follow(url, callback)
    const link = /href="([^"]+\/upstream)"/.exec(page.html ?? '')?.[1] as string
    const toProvider = await browser.request(new URL(link, page.url))
    expect(toProvider.response.status).toBe(303)
    expect(toProvider.response.headers.get('set-cookie')).toMatch(/toolport_upstream=.*HttpOnly; SameSite=Lax/)
    page = await browser.follow(
      new URL(toProvider.response.headers.get('location') as string),
      `${publicUrl}/oauth/upstream/callback`,
    )
    for (let step = 0; step < 3 && !page.done; step++) {
      const html = page.html ?? ''
      page = await browser.follow(
        formAction({ url: page.url, html }),
        `${publicUrl}/oauth/upstream/callback`,
        html.includes('name="login"')
          ? { method: 'POST', form: { prompt: 'login', login: 'ada@example.com', password: 'any' } }
          : { method: 'POST', form: { prompt: 'consent' } },
      )
    }
    expect(page.done).toBe(true)
    const returned = page.url
    const elsewhere = await fetch(returned, { redirect: 'manual' })
    expect(elsewhere.status).toBe(403)
    expect(await elsewhere.text()).toContain('not started in this browser')
    // In the right browser, a state that is not the one sent is refused too.
    const forged = new URL(returned)
    forged.searchParams.set('state', 'forged-state')
    const wrongState = await browser.request(forged)
    expect(wrongState.response.status).toBe(403)
    await wrongState.response.arrayBuffer()
    // A refused return spends the binding: the sign-in starts again from the client, never half-way.
    const after = await browser.request(returned)
    expect(after.response.status).toBe(403)
    expect(await after.response.text()).toContain('not started in this browser')
  })
})
