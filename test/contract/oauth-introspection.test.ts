import type { Server } from 'node:http'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { exportJWK, generateKeyPair } from 'jose'
import Provider, { errors } from 'oidc-provider'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { scopesSupported } from '../../src/auth/oauth/scopes'
import { freePort } from '../support/ports'
import { startTestServer, type TestServer } from '../support/server'

// Opaque access tokens checked by introspection (RFC 7662): a real OpenID provider (oidc-provider)
// issues opaque tokens for toolport's resource by client credentials and introspects them for
// toolport's own confidential client; every answer is asserted over HTTP on REST and /mcp.
const publicUrl = 'https://toolport.example.test'
const otherResource = 'https://other.example.test'
const acmeKey = 'acme-key-0123456789abcdef'
const agent = { id: 'agent', secret: 'agent-secret-0123456789abcdef' }
const introspection = { id: 'toolport', secret: 'toolport-introspection-secret-0123456789' }
let server: TestServer
let provider: Server
let issuer: string

beforeAll(async () => {
  const providerPort = await freePort()
  issuer = `http://127.0.0.1:${providerPort}`
  const { privateKey } = await generateKeyPair('RS256', { extractable: true })
  const oidc = new Provider(issuer, {
    clients: [
      // toolport as the resource: it only introspects.
      {
        client_id: introspection.id,
        client_secret: introspection.secret,
        grant_types: [],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
      },
      // A machine client that gets tokens for itself.
      {
        client_id: agent.id,
        client_secret: agent.secret,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        scope: scopesSupported.join(' '),
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'provider-key', alg: 'RS256', use: 'sig' }] },
    cookies: { keys: ['toolport-test-cookie-key'] },
    scopes: [...scopesSupported],
    features: {
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => publicUrl,
        getResourceServerInfo: (_context, resource) => {
          if (![publicUrl, `${publicUrl}/mcp`, otherResource].includes(resource)) throw new errors.InvalidTarget()
          return {
            scope: scopesSupported.join(' '),
            audience: resource,
            accessTokenTTL: 300,
            accessTokenFormat: 'opaque',
          }
        },
      },
    },
    extraTokenClaims: () => ({ toolport_tenant: 'acme' }),
  })
  provider = oidc.listen(providerPort, '127.0.0.1')
  server = await startTestServer(withIntrospection(introspection.secret))
})

afterAll(async () => {
  await server?.stop()
  provider?.closeAllConnections()
  await new Promise((resolve) => provider?.close(resolve))
})

function withIntrospection(secret: string): Record<string, string> {
  return {
    TOOLPORT_API_KEYS: `acme=${acmeKey}`,
    TOOLPORT_PUBLIC_URL: publicUrl,
    TOOLPORT_OAUTH_ISSUER: issuer,
    TOOLPORT_OAUTH_INTROSPECTION_CLIENT_ID: introspection.id,
    TOOLPORT_OAUTH_INTROSPECTION_CLIENT_SECRET: secret,
    TOOLPORT_APPROVAL: 'none',
  }
}

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`

/** A fresh opaque token by client credentials (never used before, so no cache has seen it). */
async function opaqueToken(resource = publicUrl, scope = 'tools:read tools:write'): Promise<string> {
  const response = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: { authorization: basic(agent.id, agent.secret) },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope, resource }),
  })
  const body = (await response.json()) as { access_token?: string }
  if (!response.ok || !body.access_token) throw new Error(`no token: ${JSON.stringify(body)}`)
  return body.access_token
}

async function call(target: TestServer, tool: string, body: unknown, bearer: string) {
  const response = await fetch(`${target.url}/v1/tools/${tool}?workspace=intro`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
    body: JSON.stringify(body),
  })
  return { status: response.status, headers: response.headers, body: await response.json() }
}

describe('opaque access tokens by introspection', () => {
  it('serves an opaque token of the issuer on a REST call and on /mcp, as its tenant', async () => {
    const token = await opaqueToken()
    expect(token.split('.')).toHaveLength(1)
    const written = await call(server, 'write_file', { path: 'opaque.txt', content: 'by introspection' }, token)
    expect(written.status).toBe(200)
    // The same token again (from the cache), and the file is the token's tenant's.
    expect((await call(server, 'read_file', { path: 'opaque.txt' }, token)).body).toMatchObject({
      content: 'by introspection',
    })
    expect((await call(server, 'read_file', { path: 'opaque.txt' }, acmeKey)).body).toMatchObject({
      content: 'by introspection',
    })

    const client = new Client({ name: 'introspection-test', version: '1.0.0' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp?workspace=intro`), {
        requestInit: { headers: { authorization: `Bearer ${await opaqueToken(`${publicUrl}/mcp`)}` } },
      }),
    )
    const read = await client.callTool({ name: 'read_file', arguments: { path: 'opaque.txt' } })
    expect(read.isError).toBeFalsy()
    expect(JSON.stringify(read.content)).toContain('by introspection')
    await client.close()
  })

  it('answers 403 insufficient_scope for an opaque token without the scope, as for JWTs', async () => {
    const reader = await opaqueToken(publicUrl, 'tools:read')
    const refused = await call(server, 'write_file', { path: 'nope.txt', content: 'x' }, reader)
    expect(refused.status).toBe(403)
    expect(refused.body).toMatchObject({ error: 'insufficient_scope', scope: 'tools:write' })
  })

  it('refuses a revoked token, one for another resource and a made-up one with 401 invalid_token', async () => {
    const revoked = await opaqueToken()
    const revocation = await fetch(`${issuer}/token/revocation`, {
      method: 'POST',
      headers: { authorization: basic(agent.id, agent.secret) },
      body: new URLSearchParams({ token: revoked, token_type_hint: 'access_token' }),
    })
    expect(revocation.status).toBe(200)
    const cases: Array<[string, string, RegExp]> = [
      ['revoked', revoked, /not active/],
      ['another resource', await opaqueToken(otherResource), /another resource \(aud\)/],
      ['made up', 'not-a-key-and-not-a-token-0123456789', /not active/],
    ]
    for (const [name, token, reason] of cases) {
      const refused = await call(server, 'read_file', { path: 'opaque.txt' }, token)
      expect(refused.status, name).toBe(401)
      expect(refused.body.detail, name).toMatch(reason)
      expect(refused.headers.get('www-authenticate'), name).toContain('error="invalid_token"')
      // The answer never repeats the token.
      expect(JSON.stringify(refused.body), name).not.toContain(token)
    }
  })

  it('answers 503 naming the setup when the issuer refuses toolport’s introspection secret', async () => {
    const misconfigured = await startTestServer(withIntrospection('not-the-secret-0123456789'))
    try {
      const refused = await call(misconfigured, 'read_file', { path: 'opaque.txt' }, await opaqueToken())
      expect(refused.status).toBe(503)
      expect(refused.body).toMatchObject({ code: 'unavailable' })
      expect(refused.body.hint).toMatch(/TOOLPORT_OAUTH_INTROSPECTION_CLIENT_SECRET/)
      // Keys keep working.
      expect((await call(misconfigured, 'list_files', {}, acmeKey)).status).toBe(200)
    } finally {
      await misconfigured.stop()
    }
  })

  it('answers 503 with Retry-After while the issuer cannot be reached', async () => {
    const token = await opaqueToken()
    provider.closeAllConnections()
    await new Promise((resolve) => provider.close(resolve))
    const refused = await call(server, 'read_file', { path: 'opaque.txt' }, token)
    expect(refused.status).toBe(503)
    expect(refused.body).toMatchObject({ code: 'unavailable' })
    expect(refused.headers.get('retry-after')).toBe('5')
    expect((await call(server, 'read_file', { path: 'opaque.txt' }, acmeKey)).status).toBe(200)
  })
})
