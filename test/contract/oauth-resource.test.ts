import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTokenVerifier } from '../../src/auth/oauth/token-verifier'
import { loadConfig } from '../../src/config/config'
import { toolNames } from '../../src/tools/builtins'
import { startTestServer, type TestServer } from '../support/server'
import { startTokenIssuer, type TokenIssuer } from '../support/token-issuer'

// toolport as an OAuth protected resource (RFC 9728, RFC 6750, RFC 8707) beside API keys: tokens of
// the configured issuer are verified against its published keys; every way a token can be wrong is
// tried through the public interface.
const publicUrl = 'https://toolport.example.test'
const acmeKey = 'acme-key-0123456789abcdef'
let issuer: TokenIssuer
let server: TestServer

const tokenFor = (claims: Record<string, unknown>, options?: { expiresIn?: string | number; notBefore?: number }) =>
  issuer.sign({ aud: publicUrl, toolport_tenant: 'acme', scope: 'tools:read tools:write', ...claims }, options)

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url')
}

async function call(tool: string, body: unknown, bearer: string | undefined, query = '') {
  const response = await fetch(`${server.url}/v1/tools/${tool}${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
    body: JSON.stringify(body),
  })
  return { status: response.status, headers: response.headers, body: await response.json() }
}

beforeAll(async () => {
  issuer = await startTokenIssuer()
  server = await startTestServer({
    TOOLPORT_API_KEYS: `acme=${acmeKey}`,
    TOOLPORT_PUBLIC_URL: publicUrl,
    TOOLPORT_OAUTH_ISSUER: issuer.issuer,
    TOOLPORT_OAUTH_WORKSPACE_CLAIM: 'toolport_workspace',
    TOOLPORT_APPROVAL: 'none',
  })
})

afterAll(async () => {
  await server?.stop()
  await issuer?.stop()
})

describe('toolport as an OAuth protected resource', () => {
  it('publishes its resource metadata, root and /mcp forms, naming the issuer and the scopes', async () => {
    for (const [path, resource] of [
      ['/.well-known/oauth-protected-resource', publicUrl],
      ['/.well-known/oauth-protected-resource/mcp', `${publicUrl}/mcp`],
    ]) {
      const response = await fetch(`${server.url}${path}`)
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual({
        resource,
        authorization_servers: [issuer.issuer],
        scopes_supported: ['tools:read', 'tools:write', 'tools:external', 'tools:destructive', 'approver', 'admin'],
        bearer_methods_supported: ['header'],
        resource_name: 'toolport',
        resource_documentation: `${publicUrl}/docs`,
      })
    }
  })

  it('answers 401 with where to sign in and the scopes, on REST and on /mcp', async () => {
    const rest = await call('read_file', { path: 'a.txt' }, undefined)
    expect(rest.status).toBe(401)
    expect(rest.headers.get('www-authenticate')).toBe(
      `Bearer realm="toolport", resource_metadata="${publicUrl}/.well-known/oauth-protected-resource", scope="tools:read tools:write tools:external tools:destructive approver admin"`,
    )
    const mcp = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    expect(mcp.status).toBe(401)
    expect(mcp.headers.get('www-authenticate')).toContain(
      `resource_metadata="${publicUrl}/.well-known/oauth-protected-resource/mcp"`,
    )
  })

  it('serves a valid token as its tenant, with keys working beside it', async () => {
    const token = await tokenFor({})
    expect((await call('write_file', { path: 'by-token.txt', content: 'token' }, token, '?workspace=w')).status).toBe(
      200,
    )
    const byKey = await call('read_file', { path: 'by-token.txt' }, acmeKey, '?workspace=w')
    expect(byKey).toMatchObject({ status: 200, body: { content: 'token' } })
    // A token minted for the MCP endpoint's identifier is this resource's too.
    const forMcp = await tokenFor({ aud: `${publicUrl}/mcp` })
    expect((await call('read_file', { path: 'by-token.txt' }, forMcp, '?workspace=w')).status).toBe(200)
  })

  it('answers 403 insufficient_scope naming the scope a call needs (step-up)', async () => {
    const reader = await tokenFor({ scope: 'tools:read' })
    const refused = await call('write_file', { path: 'nope.txt', content: 'x' }, reader)
    expect(refused.status).toBe(403)
    expect(refused.body).toMatchObject({ code: 'permission_denied', error: 'insufficient_scope', scope: 'tools:write' })
    expect(refused.headers.get('www-authenticate')).toBe(
      `Bearer realm="toolport", resource_metadata="${publicUrl}/.well-known/oauth-protected-resource", error="insufficient_scope", error_description="This token lacks the scope tools:write to call write_file.", scope="tools:write"`,
    )
    // One tool by name, nothing else of its effect.
    const single = await tokenFor({ scope: 'tool:read_file' })
    expect((await call('read_file', { path: 'by-token.txt' }, single, '?workspace=w')).status).toBe(200)
    expect((await call('list_files', {}, single, '?workspace=w')).body).toMatchObject({ scope: 'tools:read' })
    // The listing shows a token only what its scopes reach.
    const listed = await fetch(`${server.url}/v1/tools`, { headers: { authorization: `Bearer ${reader}` } })
    const names = ((await listed.json()) as { tools: { name: string }[] }).tools.map((tool) => tool.name)
    expect(names).toContain('read_file')
    expect(names).not.toContain('write_file')
  })

  it('refuses every wrong token with 401 invalid_token and a reason, never serving it', async () => {
    const header = { alg: 'none', typ: 'JWT' }
    const payload = {
      iss: issuer.issuer,
      aud: publicUrl,
      sub: 'user-1',
      toolport_tenant: 'acme',
      scope: 'tools:read',
      exp: Math.floor(Date.now() / 1000) + 300,
    }
    const valid = await tokenFor({})
    const [validHeader, validPayload] = valid.split('.')
    const cases: Array<[string, string, RegExp]> = [
      ['another audience', await tokenFor({ aud: 'https://other.example.test' }), /another resource \(aud\)/],
      ['another issuer', await tokenFor({ iss: 'https://evil.example.test' }), /another issuer \(iss\)/],
      ['expired', await tokenFor({}, { expiresIn: Math.floor(Date.now() / 1000) - 120 }), /expired/],
      ['not yet valid', await tokenFor({}, { notBefore: Math.floor(Date.now() / 1000) + 600 }), /not valid yet/],
      ['alg none', `${base64url(header)}.${base64url(payload)}.`, /algorithm is not accepted/],
      [
        'HS256 with the public key as secret',
        await new SignJWT(payload)
          .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
          .sign(new TextEncoder().encode(JSON.stringify(issuer.publicJwk()))),
        /algorithm is not accepted/,
      ],
      ['a key the issuer never published', await issuer.signWithUnknownKey(payload), /key the issuer does not publish/],
      [
        'a payload swapped under a valid signature',
        `${validHeader}.${base64url({ ...payload, toolport_tenant: 'other' })}.${valid.split('.')[2]}`,
        /signature does not verify/,
      ],
      ['no tenant', await tokenFor({ toolport_tenant: undefined }), /names no tenant/],
      ['garbage', 'not-a-key-and-not-a-jwt', /neither a key nor a JWT/],
      [
        'a header and payload without a signature',
        `${validHeader}.${validPayload}.`,
        /could not be verified|signature/,
      ],
    ]
    for (const [name, token, reason] of cases) {
      const answer = await call('read_file', { path: 'by-token.txt' }, token, '?workspace=w')
      expect(answer.status, name).toBe(401)
      expect(answer.body.detail, name).toMatch(reason)
      expect(answer.headers.get('www-authenticate'), name).toContain('error="invalid_token"')
    }
  })

  it("keeps a token inside its tenant: another tenant's files and jobs are not there", async () => {
    const acme = await tokenFor({})
    const other = await tokenFor({ toolport_tenant: 'other' })
    expect(
      (await call('write_file', { path: 'secret.txt', content: 'acme only' }, acme, '?workspace=shared')).status,
    ).toBe(200)
    expect((await call('read_file', { path: 'secret.txt' }, other, '?workspace=shared')).status).toBe(404)
    const job = await call('list_files', {}, acme, '?workspace=shared&async=true')
    expect(job.status).toBe(202)
    const seen = await fetch(`${server.url}/v1/jobs/${job.body.job_id}`, {
      headers: { authorization: `Bearer ${other}` },
    })
    expect(seen.status).toBe(404)
    const own = await fetch(`${server.url}/v1/jobs/${job.body.job_id}`, {
      headers: { authorization: `Bearer ${acme}` },
    })
    expect(own.status).toBe(200)
  })

  it('uses the workspace claim when a call names none', async () => {
    const token = await tokenFor({ toolport_workspace: 'claimed' })
    expect((await call('write_file', { path: 'where.txt', content: 'claimed' }, token)).status).toBe(200)
    const read = await call('read_file', { path: 'where.txt' }, acmeKey, '?workspace=claimed')
    expect(read).toMatchObject({ status: 200, body: { content: 'claimed' } })
  })

  it("answers an MCP tools/call outside the token's scopes with HTTP 403 insufficient_scope (step-up)", async () => {
    const reader = await tokenFor({ scope: 'tools:read' })
    const post = (bearer: string, name: string) =>
      fetch(`${server.url}/mcp?workspace=w`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${bearer}`,
          'mcp-protocol-version': '2025-06-18',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 7,
          method: 'tools/call',
          params: { name, arguments: { path: 'step-up.txt', content: 'x' } },
        }),
      })
    const refused = await post(reader, 'write_file')
    expect(refused.status).toBe(403)
    expect(refused.headers.get('www-authenticate')).toContain(
      `resource_metadata="${publicUrl}/.well-known/oauth-protected-resource/mcp", error="insufficient_scope"`,
    )
    expect(refused.headers.get('www-authenticate')).toContain('scope="tools:write"')
    // With the scope, the same call is served.
    const writer = await tokenFor({ scope: 'tools:write' })
    expect((await post(writer, 'write_file')).status).toBe(200)
  })

  it('serves MCP to a token: the SDK client lists only what the scopes reach', async () => {
    const reader = await tokenFor({ scope: 'tools:read' })
    const client = new Client({ name: 'oauth-test', version: '1.0.0' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${reader}` } },
      }),
    )
    const names = (await client.listTools()).tools.map((tool) => tool.name)
    expect(names).toContain('read_file')
    expect(names).not.toContain('write_file')
    await client.close()
  })
})

describe('the token verifier', () => {
  it("follows the issuer's key rotation: a token of the new key is accepted, one of the retired key refused", async () => {
    const own = await startTokenIssuer()
    try {
      const config = loadConfig({ TOOLPORT_PUBLIC_URL: publicUrl, TOOLPORT_OAUTH_ISSUER: own.issuer }, { toolNames })
      const verifier = createTokenVerifier({
        settings: { ...config.oauth, issuer: own.issuer },
        audiences: [publicUrl],
        approvalPolicy: [],
        keyRefetchCooldownMs: 0,
      })
      const claims = { aud: publicUrl, toolport_tenant: 'acme', scope: 'tools:read' }
      const before = await own.sign(claims)
      expect(await verifier.verify(before)).toMatchObject({ tenant: 'acme' })
      await own.rotate()
      const after = await own.sign(claims)
      expect(await verifier.verify(after)).toMatchObject({ tenant: 'acme' })
      // The retired key is no longer published: its tokens stop working.
      await expect(verifier.verify(before)).rejects.toMatchObject({ code: 'unauthenticated' })
    } finally {
      await own.stop()
    }
  })

  it('answers 503 while the issuer cannot be reached, recovers once it can, and refuses metadata of another issuer', async () => {
    const own = await startTokenIssuer()
    const other = await startTokenIssuer()
    try {
      const config = loadConfig({ TOOLPORT_PUBLIC_URL: publicUrl, TOOLPORT_OAUTH_ISSUER: own.issuer }, { toolNames })
      const token = await own.sign({ aud: publicUrl, toolport_tenant: 'acme' })
      let reachable = false
      const verifier = createTokenVerifier({
        settings: { ...config.oauth, issuer: own.issuer },
        audiences: [publicUrl],
        approvalPolicy: [],
        fetch: async (input, init) => {
          if (!reachable) throw new TypeError('fetch failed')
          return fetch(input, init)
        },
      })
      await expect(verifier.verify(token)).rejects.toMatchObject({ code: 'unavailable' })
      reachable = true
      expect(await verifier.verify(token)).toMatchObject({ tenant: 'acme' })
      // Metadata fetched from the configured address that names another issuer is not trusted.
      const impostor = createTokenVerifier({
        settings: { ...config.oauth, issuer: own.issuer },
        audiences: [publicUrl],
        approvalPolicy: [],
        fetch: (input, init) => fetch(String(input).replace(own.issuer, other.issuer), init),
      })
      await expect(impostor.verify(token)).rejects.toMatchObject({ code: 'unavailable' })
    } finally {
      await own.stop()
      await other.stop()
    }
  })
})
