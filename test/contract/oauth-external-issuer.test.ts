import type { Server } from 'node:http'
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { exportJWK, generateKeyPair } from 'jose'
import Provider from 'oidc-provider'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { scopesSupported } from '../../src/auth/oauth/scopes'
import { createCookieWalker, formAction, MemoryOAuthClient } from '../support/oauth-client'
import { freePort } from '../support/ports'
import { startTestServer, type TestServer } from '../support/server'

// The MCP TypeScript SDK client's own OAuth support against toolport as a resource only, with a real
// OpenID provider (oidc-provider, started here) as the issuer: discovery from toolport's 401 and
// resource metadata, dynamic client registration at the provider, authorization code with PKCE and a
// resource indicator, the sign-in and consent pages walked over HTTP, the token, then tools/call.
let server: TestServer
let provider: Server
let publicUrl: string
let issuer: string
const callback = 'http://127.0.0.1:9/callback'

beforeAll(async () => {
  const [port, providerPort] = [await freePort(), await freePort()]
  publicUrl = `http://127.0.0.1:${port}`
  issuer = `http://127.0.0.1:${providerPort}`
  const { privateKey } = await generateKeyPair('RS256', { extractable: true })
  const oidc = new Provider(issuer, {
    clients: [],
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'provider-key', alg: 'RS256', use: 'sig' }] },
    cookies: { keys: ['toolport-test-cookie-key'] },
    // toolport's scopes, as the operator defines them at the provider (docs/auth.md).
    scopes: ['openid', 'offline_access', ...scopesSupported],
    features: {
      registration: { enabled: true },
      devInteractions: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => `${publicUrl}/mcp`,
        useGrantedResource: () => true,
        getResourceServerInfo: (_context, resource) => {
          if (!resource.startsWith(publicUrl)) throw new Error(`unknown resource ${resource}`)
          return {
            scope: scopesSupported.join(' '),
            audience: resource,
            accessTokenTTL: 300,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          }
        },
      },
    },
    pkce: { required: () => true },
    extraTokenClaims: () => ({ toolport_tenant: 'acme' }),
    findAccount: (_context, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
  })
  provider = oidc.listen(providerPort, '127.0.0.1')
  server = await startTestServer(
    {
      TOOLPORT_API_KEYS: 'acme=acme-key-0123456789abcdef',
      TOOLPORT_PUBLIC_URL: publicUrl,
      TOOLPORT_OAUTH_ISSUER: issuer,
      TOOLPORT_APPROVAL: 'none',
    },
    { port },
  )
})

afterAll(async () => {
  await server?.stop()
  await new Promise((resolve) => provider?.close(resolve))
})

/** A person signing in at the provider (any login, dev interactions) and approving the consent page. */
async function signIn(authorizationUrl: URL): Promise<string> {
  const browser = createCookieWalker()
  let page = await browser.follow(authorizationUrl, callback)
  for (let step = 0; step < 4 && !page.done; step++) {
    const form: Record<string, string> = page.html.includes('name="login"')
      ? { prompt: 'login', login: 'ada', password: 'any' }
      : { prompt: 'consent' }
    page = await browser.follow(formAction(page), callback, { method: 'POST', form })
  }
  if (!page.done) throw new Error(`sign-in did not come back: ${page.html.slice(0, 300)}`)
  const code = page.url.searchParams.get('code')
  if (!code) throw new Error(`no code in ${page.url.href}`)
  return code
}

describe('the MCP SDK client with an external OpenID provider as issuer', () => {
  it('discovers, registers, signs in, gets a token for toolport and calls a tool', async () => {
    const oauth = new MemoryOAuthClient(callback)
    const url = new URL(`${publicUrl}/mcp`)
    const first = new Client({ name: 'oauth-sdk-test', version: '1.0.0' })
    await expect(first.connect(new StreamableHTTPClientTransport(url, { authProvider: oauth }))).rejects.toThrow(
      UnauthorizedError,
    )
    // The SDK found the provider through toolport's resource metadata and registered itself there.
    expect(oauth.information?.client_id).toBeTruthy()
    const authorizationUrl = oauth.authorizationUrl as URL
    expect(authorizationUrl.origin).toBe(issuer)
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256')
    expect(authorizationUrl.searchParams.get('resource')).toBe(`${publicUrl}/mcp`)

    const transport = new StreamableHTTPClientTransport(url, { authProvider: oauth })
    await transport.finishAuth(await signIn(authorizationUrl))
    expect(oauth.saved?.access_token.split('.')).toHaveLength(3)
    const client = new Client({ name: 'oauth-sdk-test', version: '1.0.0' })
    await client.connect(transport)
    const written = await client.callTool({ name: 'write_file', arguments: { path: 'sdk.txt', content: 'via oauth' } })
    expect(written.isError).toBeFalsy()
    await client.close()

    // The file is the token's tenant's (acme), as the key of that tenant sees it.
    const read = await server.call('read_file', { path: 'sdk.txt' }, { key: 'acme-key-0123456789abcdef' })
    expect(read).toMatchObject({ status: 200, body: { content: 'via oauth' } })
  })
})
