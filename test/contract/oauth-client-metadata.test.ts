import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testCertificates } from '../support/certificates'
import { type FleetInstance, startInstance } from '../support/fleet'
import { createCookieWalker, pkcePair, signInWithKey } from '../support/oauth-client'
import { freePort } from '../support/ports'

// Client ID Metadata Documents (MCP 2025-11-25) at the built-in server: a client whose client_id is
// the https URL of a JSON document describing it, with no registration. The document is fetched
// under toolport's outbound address rules, so a client id cannot make the server reach a private
// address. toolport runs as its own process here: it must trust the test's certificate authority
// (NODE_EXTRA_CA_CERTS), which Node reads only at start.
const key = 'cimd-owner-key-0123456789'
const callback = 'http://127.0.0.1:9/cimd-callback'
let documents: Server
let documentOrigin: string
const fetched: string[] = []
/** The same kind of server on a port the operator did not open: an internal service. */
let internal: Server
let internalOrigin: string
const internalHits: string[] = []
let toolport: FleetInstance
let publicUrl: string

/** What each path of the document server answers. */
const served = new Map<string, unknown>()

beforeAll(async () => {
  const certificates = testCertificates()
  documents = createServer(
    { key: readFileSync(certificates.key), cert: readFileSync(certificates.cert) },
    (request, response) => {
      fetched.push(request.url ?? '')
      const body = served.get(request.url ?? '')
      response.writeHead(body ? 200 : 404, { 'content-type': 'application/json', 'cache-control': 'max-age=60' })
      response.end(body ? JSON.stringify(body) : '{}')
    },
  )
  await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve))
  documentOrigin = `https://127.0.0.1:${(documents.address() as AddressInfo).port}`
  internal = createServer(
    { key: readFileSync(certificates.key), cert: readFileSync(certificates.cert) },
    (request, response) => {
      internalHits.push(request.url ?? '')
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ client_id: `${internalOrigin}${request.url}`, redirect_uris: [callback] }))
    },
  )
  await new Promise<void>((resolve) => internal.listen(0, '127.0.0.1', resolve))
  internalOrigin = `https://127.0.0.1:${(internal.address() as AddressInfo).port}`
  const port = await freePort()
  publicUrl = `http://127.0.0.1:${port}`
  toolport = await startInstance(
    { bucket: 'unused', endpoint: 'http://127.0.0.1:9' },
    {
      name: 'cimd',
      env: {
        PORT: String(port),
        TOOLPORT_STORAGE: 'fs',
        TOOLPORT_PUBLIC_URL: publicUrl,
        TOOLPORT_OAUTH_ISSUER: 'builtin',
        TOOLPORT_API_KEYS: `cimd=${key}`,
        TOOLPORT_APPROVAL: 'none',
        NODE_EXTRA_CA_CERTS: certificates.ca,
        // The document server is on loopback: opened for this port only, as an operator would.
        TOOLPORT_FETCH_ALLOW_HOSTS: new URL(documentOrigin).host,
      },
    },
  )
})

afterAll(async () => {
  await toolport?.kill()
  documents?.close()
  internal?.close()
})

async function authorization(clientId: string, challenge: string): Promise<URL> {
  const url = new URL(`${publicUrl}/oauth/auth`)
  const params = {
    client_id: clientId,
    redirect_uri: callback,
    response_type: 'code',
    scope: 'tools:read',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    resource: `${publicUrl}/mcp`,
  }
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value)
  return url
}

describe('Client ID Metadata Documents', () => {
  it('are advertised, and a client described by one signs in and gets a token with no registration', async () => {
    const metadata = (await (
      await fetch(`${publicUrl}/oauth/.well-known/oauth-authorization-server`)
    ).json()) as Record<string, unknown>
    expect(metadata.client_id_metadata_document_supported).toBe(true)
    const clientId = `${documentOrigin}/clients/editor.json`
    served.set('/clients/editor.json', {
      client_id: clientId,
      client_name: 'Metadata Editor',
      redirect_uris: [callback],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    })
    const pkce = await pkcePair()
    const { code, pages } = await signInWithKey(await authorization(clientId, pkce.challenge), key, callback)
    expect(pages.some((page) => page.html.includes('Metadata Editor'))).toBe(true)
    const token = await fetch(`${publicUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: clientId,
        code,
        redirect_uri: callback,
        code_verifier: pkce.verifier,
        resource: `${publicUrl}/mcp`,
      }).toString(),
    })
    const body = (await token.json()) as Record<string, string>
    expect(token.status, JSON.stringify(body)).toBe(200)
    const call = await fetch(`${publicUrl}/v1/tools/list_files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${body.access_token}`, 'content-type': 'application/json' },
      body: '{}',
    })
    expect(call.status).toBe(200)
    await call.arrayBuffer()
  })

  it('are refused when the document lies about its client id or lives at an address the rules refuse', async () => {
    const liar = `${documentOrigin}/clients/liar.json`
    served.set('/clients/liar.json', {
      client_id: `${documentOrigin}/clients/someone-else.json`,
      redirect_uris: [callback],
      token_endpoint_auth_method: 'none',
    })
    const pkce = await pkcePair()
    const lied = await createCookieWalker().follow(await authorization(liar, pkce.challenge), callback)
    expect(lied.done).toBe(false)
    expect((lied as { html: string }).html).toMatch(/invalid_client/)
    // Loopback the operator did not open, and the cloud metadata address: never fetched.
    const before = fetched.length
    const port = new URL(documentOrigin).port
    for (const spelling of [
      `${internalOrigin}/client.json`,
      `https://localhost:${port}/clients/editor.json`,
      'https://169.254.169.254/latest/meta-data.json',
    ]) {
      const refused = await createCookieWalker().follow(await authorization(spelling, pkce.challenge), callback)
      expect(refused.done).toBe(false)
      expect((refused as { html: string }).html).toMatch(/invalid_client/)
    }
    expect(fetched.length).toBe(before)
    expect(internalHits).toEqual([])
    // A plain-http client id is no metadata document at all.
    const plain = await createCookieWalker().follow(
      await authorization(`http://127.0.0.1:${port}/clients/editor.json`, pkce.challenge),
      callback,
    )
    expect(plain.done).toBe(false)
  })
})
