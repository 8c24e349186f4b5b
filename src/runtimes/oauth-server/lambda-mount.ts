import { inject } from 'light-my-request'
import type { Fleet, OAuthServerMount } from '../../app'
import type { Config } from '../../config/config'
import type { Logger } from '../../core/logger'
import type { ObjectStore } from '../../storage/store'
import type { BuiltinOAuthServer } from './handler'
import { builtinOAuthServer } from './mount'

/** The parts of a Lambda HTTP event (hono/aws-lambda hands it over as `env.event`) that name the caller. */
interface CallerOfEvent {
  requestContext?: {
    /** API Gateway HTTP API (v2) and function URLs. */
    http?: { sourceIp?: unknown }
    /** API Gateway REST API (v1). */
    identity?: { sourceIp?: unknown }
    /** An Application Load Balancer: no source address of its own, only X-Forwarded-For. */
    elb?: unknown
  }
  headers?: Record<string, string | undefined> | null
  multiValueHeaders?: Record<string, string[] | undefined> | null
}

/**
 * The caller's address as the service in front of the function saw it: what the server's rate limit
 * counts by. An ALB appends the address it saw to X-Forwarded-For, so the last entry is its own;
 * anything before it was written by the client. Undefined when the event names none.
 */
export function sourceIpOf(env: unknown): string | undefined {
  const event = (env as { event?: CallerOfEvent } | undefined)?.event
  const context = event?.requestContext
  for (const candidate of [context?.http?.sourceIp, context?.identity?.sourceIp]) {
    if (typeof candidate === 'string' && candidate) return candidate
  }
  if (context?.elb) {
    const forwarded =
      event?.multiValueHeaders?.['x-forwarded-for']?.join(',') ?? event?.headers?.['x-forwarded-for'] ?? ''
    const last = forwarded.split(',').at(-1)?.trim()
    if (last) return last
  }
  return undefined
}

/**
 * Serves one request of the built-in server without a Node server: light-my-request makes the Node
 * request and response pair oidc-provider and the pages speak from the Web request, and the response
 * they write becomes a Web response again (every Set-Cookie kept apart). The scheme and host are
 * TOOLPORT_PUBLIC_URL's, whatever domain the request came in on (the function URL, the execute-api
 * domain, a custom domain): oidc-provider (proxy on) builds its endpoint URLs from X-Forwarded-Proto
 * and X-Forwarded-Host, and they must be the issuer's.
 */
export async function serveInjected(
  server: Pick<BuiltinOAuthServer, 'handle'>,
  request: Request,
  options: { publicUrl: string; remoteAddress?: string | undefined },
): Promise<Response> {
  const url = new URL(request.url)
  const origin = new URL(options.publicUrl)
  const headers: Record<string, string> = {}
  request.headers.forEach((value, name) => {
    // The body is handed over whole: light-my-request states its length.
    if (name !== 'content-length' && name !== 'transfer-encoding') headers[name] = value
  })
  headers.host = origin.host
  headers['x-forwarded-host'] = origin.host
  headers['x-forwarded-proto'] = origin.protocol.slice(0, -1)
  const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined
  const answer = await inject((req, res) => void server.handle(req, res), {
    method: request.method as 'GET',
    url: `${url.pathname}${url.search}`,
    headers,
    ...(body && body.length > 0 ? { payload: body } : {}),
    // light-my-request's default is 127.0.0.1: callers the event names no address for share one count.
    remoteAddress: options.remoteAddress ?? 'unknown',
  })
  const answerHeaders = new Headers()
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value === undefined) continue
    // Hop-by-hop: the Lambda integration frames the response itself.
    if (name === 'connection' || name === 'transfer-encoding' || name === 'keep-alive') continue
    for (const single of Array.isArray(value) ? value : [value]) answerHeaders.append(name, String(single))
  }
  const empty = answer.statusCode === 204 || answer.statusCode === 304 || request.method === 'HEAD'
  return new Response(empty ? null : new Uint8Array(answer.rawPayload), {
    status: answer.statusCode,
    headers: answerHeaders,
  })
}

/**
 * The built-in authorization server on AWS Lambda (TOOLPORT_OAUTH_ISSUER=builtin), mounted at /oauth.
 * Lambda has no Node server: each request is injected into the server's Node handler (serveInjected),
 * with the caller's source address from the event. Its state lives in the bucket, so the steps of one
 * sign-in may land on any execution environment; its rate limit, with no fleet to share it, counts in
 * each execution environment on its own. Loaded only when configured.
 */
export async function lambdaOAuthServer(
  config: Config,
  storage: ObjectStore,
  log: Logger,
  fleet?: Pick<Fleet, 'rateLimiter'>,
): Promise<OAuthServerMount | undefined> {
  const server = await builtinOAuthServer(config, storage, log, fleet)
  const publicUrl = config.http.configuredPublicUrl
  if (!server || !publicUrl) return undefined
  return {
    issuer: server.issuer,
    publicKeys: server.publicKeys,
    serve: (context) => serveInjected(server, context.req.raw, { publicUrl, remoteAddress: sourceIpOf(context.env) }),
  }
}
