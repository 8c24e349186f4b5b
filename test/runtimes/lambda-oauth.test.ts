import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLambdaApp, createLambdaHandler } from '../../src/runtimes/lambda-service'
import { type EventShape, lambdaEvent } from '../support/lambda-events'
import { createCookieWalker, pkcePair, signInWithKey } from '../support/oauth-client'
import { type S3rverInstance, s3rverCredentials, s3rverEnv, startS3rver } from '../support/s3rver'

// The built-in authorization server (TOOLPORT_OAUTH_ISSUER=builtin) on the Lambda handler, every
// request a recorded event shape, on s3rver: discovery, registration, the sign-in and consent pages
// (cookies carried between invocations by the test, as a browser would), the token with PKCE, a tool
// call with the token; and the token endpoint's rate limit by the event's source address.
const key = 'lambda-oauth-key-0123456789'
// Not the domain the recorded events came in on: the issuer's URLs must be this one all the same.
const publicUrl = 'https://tools.example.test'
const callback = 'http://127.0.0.1:9/callback'
let s3: S3rverInstance
let scratch: string
const savedEnv = { ...process.env }

type Handler = ReturnType<typeof createLambdaHandler>

interface LambdaResult {
  statusCode: number
  body: string
  isBase64Encoded: boolean
  headers?: Record<string, string>
  multiValueHeaders?: Record<string, string[]>
  /** HTTP API (v2) and function URLs: the Set-Cookie headers, each apart. */
  cookies?: string[]
}

async function lambdaHandler(extra: Record<string, string> = {}): Promise<Handler> {
  const lambda = createLambdaApp({
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    ...s3rverEnv(s3),
    TOOLPORT_API_KEYS: `acme=${key}`,
    TOOLPORT_SIGNING_SECRET: 'lambda-oauth-test-signing-secret-0123456789',
    TOOLPORT_PUBLIC_URL: publicUrl,
    TOOLPORT_OAUTH_ISSUER: 'builtin',
    TOOLPORT_APPROVAL: 'none',
    TOOLPORT_DATA_DIR: join(scratch, 'data'),
    TOOLPORT_WORK_DIR: join(scratch, 'work'),
    TOOLPORT_LOG_LEVEL: 'silent',
    ...extra,
  })
  await lambda.ready
  return createLambdaHandler(lambda)
}

/** Sets a request header on an event, replacing the recorded one whatever its case. */
// biome-ignore lint/suspicious/noExplicitAny: the recorded events are arbitrary JSON
function setHeader(event: any, shape: EventShape, name: string, value: string): void {
  for (const table of [event.headers, event.multiValueHeaders]) {
    for (const existing of Object.keys(table ?? {})) if (existing.toLowerCase() === name) delete table[existing]
  }
  if (shape === 'api-gateway-rest-v1') {
    event.headers[name] = value
    event.multiValueHeaders[name] = [value]
    return
  }
  // HTTP API (v2) and function URLs hand the request's cookies over apart from its headers.
  if (name === 'cookie') event.cookies = value.split(/;\s*/).filter(Boolean)
  else event.headers[name] = value
}

/**
 * fetch, but through the handler: each request becomes an event of `shape` from `sourceIp`, and its
 * result a Response again (every Set-Cookie apart). `seen` records the Set-Cookie lines of each answer.
 */
function eventFetch(handler: Handler, shape: EventShape, sourceIp?: string, seen: string[][] = []) {
  return async (input: URL | string, init: RequestInit = {}): Promise<Response> => {
    const request = new Request(input, init)
    const url = new URL(request.url)
    const body = request.body ? await request.text() : undefined
    const event = lambdaEvent(shape, {
      method: request.method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      key: null,
      ...(body === undefined ? {} : { body }),
    })
    request.headers.forEach((value, name) => {
      if (value !== '') setHeader(event, shape, name, value)
    })
    if (sourceIp && shape === 'api-gateway-rest-v1') event.requestContext.identity.sourceIp = sourceIp
    else if (sourceIp) event.requestContext.http.sourceIp = sourceIp
    const result = (await handler(event, {} as never)) as LambdaResult
    const headers = new Headers()
    if (result.multiValueHeaders) {
      for (const [name, values] of Object.entries(result.multiValueHeaders)) {
        for (const value of values) headers.append(name, value)
      }
    } else {
      for (const [name, value] of Object.entries(result.headers ?? {})) headers.append(name, value)
    }
    for (const cookie of result.cookies ?? []) headers.append('set-cookie', cookie)
    seen.push(headers.getSetCookie())
    const bytes = Buffer.from(result.body ?? '', result.isBase64Encoded ? 'base64' : 'utf8')
    const empty = result.statusCode === 204 || result.statusCode === 304
    return new Response(empty ? null : bytes, { status: result.statusCode, headers })
  }
}

beforeAll(async () => {
  s3 = await startS3rver()
  scratch = await mkdtemp(join(tmpdir(), 'toolport-lambda-oauth-'))
  process.env.AWS_ACCESS_KEY_ID = s3rverCredentials.accessKeyId
  process.env.AWS_SECRET_ACCESS_KEY = s3rverCredentials.secretAccessKey
  process.env.TMPDIR = join(scratch, 'tmp')
  await import('node:fs/promises').then((fs) => fs.mkdir(process.env.TMPDIR as string))
}, 60_000)

afterAll(async () => {
  process.env = savedEnv
  await s3?.stop()
  if (scratch) await rm(scratch, { recursive: true, force: true })
})

interface Discovery {
  issuer: string
  authorization_endpoint: string
  token_endpoint: string
  registration_endpoint: string
  jwks_uri: string
}

describe('the built-in authorization server on Lambda', () => {
  let handler: Handler
  beforeAll(async () => {
    handler = await lambdaHandler()
  }, 60_000)

  it('answers discovery with the TOOLPORT_PUBLIC_URL issuer and endpoints, whatever domain the event came in on', async () => {
    for (const shape of ['http-api-v2', 'function-url', 'api-gateway-rest-v1'] as const) {
      const send = eventFetch(handler, shape)
      const answer = await send(`${publicUrl}/oauth/.well-known/openid-configuration`)
      expect(answer.status).toBe(200)
      const meta = (await answer.json()) as Discovery
      expect(meta).toMatchObject({
        issuer: `${publicUrl}/oauth`,
        authorization_endpoint: `${publicUrl}/oauth/auth`,
        token_endpoint: `${publicUrl}/oauth/token`,
        registration_endpoint: `${publicUrl}/oauth/reg`,
        jwks_uri: `${publicUrl}/oauth/jwks`,
      })
      // The resource metadata points at the same issuer.
      const resource = await send(`${publicUrl}/.well-known/oauth-protected-resource/mcp`)
      expect(resource.status).toBe(200)
      expect(await resource.json()).toMatchObject({ authorization_servers: [`${publicUrl}/oauth`] })
    }
  })

  it.each(['function-url', 'api-gateway-rest-v1'] as const)(
    'signs in with a key, consents, exchanges the code with PKCE and calls a tool (%s)',
    async (shape) => {
      const seen: string[][] = []
      const send = eventFetch(handler, shape, '198.51.100.7', seen)
      const meta = (await (await send(`${publicUrl}/oauth/.well-known/openid-configuration`)).json()) as Discovery
      const registered = await send(meta.registration_endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          client_name: 'lambda client',
          redirect_uris: [callback],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
        }),
      })
      expect(registered.status).toBe(201)
      const clientId = ((await registered.json()) as { client_id: string }).client_id

      const { verifier, challenge } = await pkcePair()
      const authorization = new URL(meta.authorization_endpoint)
      for (const [name, value] of Object.entries({
        client_id: clientId,
        redirect_uri: callback,
        response_type: 'code',
        scope: 'tools:read tools:write offline_access',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        resource: `${publicUrl}/mcp`,
        state: 'lambda-state',
      }))
        authorization.searchParams.set(name, value)

      const { code, state, offered, pages } = await signInWithKey(
        authorization,
        key,
        callback,
        (scopes) => scopes,
        createCookieWalker(send),
      )
      expect(state).toBe('lambda-state')
      expect(code).not.toBe('')
      expect(offered).toEqual(expect.arrayContaining(['tools:read', 'tools:write']))
      // The sign-in page, then the consent page: each on its own invocation, the cookies carried over.
      expect(pages.map((page) => page.url.pathname)).toEqual([
        expect.stringMatching(/^\/oauth\/interaction\/[\w-]+$/),
        expect.stringMatching(/^\/oauth\/interaction\/[\w-]+$/),
      ])
      expect(pages[0]?.html).toContain('name="key"')
      // oidc-provider sets several cookies at once (the interaction's and its signature): all arrived.
      expect(Math.max(...seen.map((cookies) => cookies.length))).toBeGreaterThanOrEqual(2)
      expect(seen.flat().some((cookie) => cookie.startsWith('_interaction.sig='))).toBe(true)

      const token = await send(meta.token_endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          client_id: clientId,
          grant_type: 'authorization_code',
          code,
          redirect_uri: callback,
          code_verifier: verifier,
          resource: `${publicUrl}/mcp`,
        }).toString(),
      })
      expect(token.status).toBe(200)
      const tokens = (await token.json()) as { access_token: string; token_type: string; refresh_token?: string }
      expect(tokens.token_type).toBe('Bearer')
      expect(tokens.refresh_token).toBeTruthy()

      const call = (path: string, body: unknown, bearer: string) =>
        handler(
          lambdaEvent(shape, { path, query: { workspace: `oauth-${shape}` }, body, key: bearer }),
          {} as never,
        ) as Promise<LambdaResult>
      const written = await call(
        '/v1/tools/write_file',
        { path: 'signed-in.txt', content: `signed in on ${shape}` },
        tokens.access_token,
      )
      expect(written.statusCode).toBe(200)
      const read = await call('/v1/tools/read_file', { path: 'signed-in.txt' }, key)
      expect(read.statusCode).toBe(200)
      expect(JSON.parse(read.isBase64Encoded ? Buffer.from(read.body, 'base64').toString() : read.body)).toMatchObject({
        content: `signed in on ${shape}`,
      })
      // A token is not a key: it does not sign anyone in.
      const refused = await call('/v1/tools/read_file', { path: 'signed-in.txt' }, 'not-a-token')
      expect(refused.statusCode).toBe(401)
    },
    60_000,
  )
})

describe('the token endpoint rate limit on Lambda', () => {
  it('counts by the source address of the event: the fourth request of 3/min from one address gets 429', async () => {
    const handler = await lambdaHandler({ TOOLPORT_OAUTH_RATE_LIMIT: '3/min' })
    const tokenRequest = (send: ReturnType<typeof eventFetch>) =>
      send(`${publicUrl}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', client_id: 'nobody', code: 'x' }).toString(),
      })
    const first = eventFetch(handler, 'function-url', '192.0.2.101')
    const statuses = []
    for (let index = 0; index < 3; index++) statuses.push((await tokenRequest(first)).status)
    expect(statuses.every((status) => status !== 429)).toBe(true)
    const limited = await tokenRequest(first)
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(limited.headers.get('ratelimit-policy')).toBe('3;w=60')
    expect(await limited.json()).toMatchObject({ error: 'rate_limited' })
    // Another address (here through API Gateway REST, requestContext.identity.sourceIp) has its own count.
    const second = eventFetch(handler, 'api-gateway-rest-v1', '192.0.2.102')
    expect((await tokenRequest(second)).status).not.toBe(429)
    // A client cannot pick its count: X-Forwarded-For is not what is counted.
    const spoofed = eventFetch(handler, 'function-url', '192.0.2.101')
    const spoofedAnswer = await spoofed(`${publicUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': '203.0.113.99' },
      body: 'grant_type=authorization_code&client_id=nobody&code=x',
    })
    expect(spoofedAnswer.status).toBe(429)
  }, 60_000)
})

describe('sourceIpOf', () => {
  it('reads the address API Gateway, a function URL or an ALB reports', async () => {
    const { sourceIpOf } = await import('../../src/runtimes/oauth-server/lambda-mount')
    expect(sourceIpOf({ event: { requestContext: { http: { sourceIp: '192.0.2.1' } } } })).toBe('192.0.2.1')
    expect(sourceIpOf({ event: { requestContext: { identity: { sourceIp: '192.0.2.2' } } } })).toBe('192.0.2.2')
    // An ALB appends the address it saw: the entries before it are the client's to write.
    const alb = { requestContext: { elb: { targetGroupArn: 'arn' } } }
    expect(sourceIpOf({ event: { ...alb, headers: { 'x-forwarded-for': '10.0.0.1, 192.0.2.3' } } })).toBe('192.0.2.3')
    expect(sourceIpOf({ event: { ...alb, multiValueHeaders: { 'x-forwarded-for': ['10.0.0.1', '192.0.2.4'] } } })).toBe(
      '192.0.2.4',
    )
    expect(sourceIpOf({ event: { headers: { 'x-forwarded-for': '192.0.2.5' } } })).toBeUndefined()
    expect(sourceIpOf(undefined)).toBeUndefined()
  })
})
