import { z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { HTTPException } from 'hono/http-exception'
import { bearerChallenge } from '../auth/oauth/challenge'
import { type ErrorCode, errorCodes, isToolError, nestingError, statusOf, ToolError, titleOf } from '../core/errors'
import type { Logger } from '../core/logger'
import { describeCause } from '../core/logger'

/** RFC 9457 problem details, with toolport's `code` and model-facing `hint` always present. */
export const Problem = z
  .object({
    type: z.string().describe('URI naming the kind of problem.'),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.enum(errorCodes),
    hint: z.string().describe('One sentence telling the caller how to call correctly.'),
    request_id: z.string().optional(),
    field: z.string().optional().describe('The input field at fault, as a dotted path.'),
  })
  .passthrough()
  .openapi('Problem')

/** The content of every problem response in the OpenAPI document. */
export const problemContent = { 'application/problem+json': { schema: Problem } }

export function problemType(code: ErrorCode): string {
  return `urn:toolport:problem:${code}`
}

export function problemResponse(context: Context, error: ToolError): Response {
  const body = problemDocument(context, error)
  const headers = new Headers({ 'Content-Type': 'application/problem+json', 'Cache-Control': 'no-store' })
  for (const [name, value] of Object.entries(error.headers ?? {})) headers.set(name, value)
  const challenge = oauthChallenge(context, error)
  if (challenge) headers.set('WWW-Authenticate', challenge)
  return new Response(JSON.stringify(body), { status: body.status, headers })
}

/**
 * With OAuth on, a 401 tells the client where to sign in (the resource metadata) and which scopes to
 * ask for; a token's missing scope answers 403 insufficient_scope naming it (step-up).
 */
function oauthChallenge(context: Context, error: ToolError): string | undefined {
  const resourceMetadata = context.get('resourceMetadata') as string | undefined
  if (!resourceMetadata) return undefined
  const kind = error.details?.error
  if (error.code === 'unauthenticated') {
    return bearerChallenge({
      resourceMetadata,
      error: kind === 'invalid_token' ? 'invalid_token' : undefined,
      description: kind === 'invalid_token' ? error.message : undefined,
    })
  }
  if (error.code === 'permission_denied' && kind === 'insufficient_scope' && typeof error.details?.scope === 'string') {
    return bearerChallenge({
      resourceMetadata,
      error: 'insufficient_scope',
      description: error.message,
      scope: error.details.scope,
    })
  }
  return undefined
}

function problemDocument(context: Context, error: ToolError) {
  const status = statusOf(error.code)
  const requestId = context.get('requestId') as string | undefined
  const standard = {
    type: problemType(error.code),
    title: titleOf(error.code),
    status,
    detail: error.message,
    code: error.code,
    hint: error.hint,
  }
  // Extension members follow the standard ones and can never overwrite them.
  return { ...standard, ...error.details, ...standard, ...(requestId ? { request_id: requestId } : {}) }
}

function fromHttpException(exception: HTTPException): ToolError {
  switch (exception.status) {
    case 400:
      return new ToolError('validation', 'The request body is not valid JSON.', {
        hint: 'Send a JSON object as the body, with the header "Content-Type: application/json".',
      })
    case 401:
      return new ToolError('unauthenticated', 'Authentication is required.')
    case 413:
      return new ToolError('size_exceeded', 'The request body is larger than this service accepts.', {
        hint: 'Send a smaller body; large files must stay under the file size limit.',
      })
    case 415:
      return new ToolError('unsupported_media_type', 'The request body must be JSON.', {
        hint: 'Send the header "Content-Type: application/json" with a JSON object body.',
      })
    default:
      return new ToolError('internal', 'The request could not be processed.')
  }
}

/** Any thrown value as the ToolError a caller may see; internal details go to the log only. */
function toToolError(error: unknown, context: Context, log: Logger): ToolError {
  if (isToolError(error)) {
    if (error.origin) context.set('errorOrigin', error.origin)
    if ((error.code === 'internal' || error.code === 'unavailable') && !error.notOffered) {
      log.error(error.message, {
        code: error.code,
        cause: describeCause(error.cause),
        request_id: context.get('requestId'),
      })
    }
    return error
  }
  if (error instanceof HTTPException) return fromHttpException(error)
  const tooDeep = nestingError(error)
  if (tooDeep) {
    log.warn('input nested too deeply', { cause: describeCause(error), request_id: context.get('requestId') })
    return tooDeep
  }
  if (isClientAbort(error)) {
    // The client is gone before its body ended: its doing, not ours. Counted as an error of the
    // request (anyone could otherwise inflate the service's internal-error rate), and nobody reads it.
    log.info('request body cut off: the client closed the connection', { request_id: context.get('requestId') })
    return new ToolError('validation', 'The request body ended before it was complete: the connection was closed.', {
      hint: 'Send the whole body, as long as its Content-Length says.',
    })
  }
  log.error('unhandled error', { cause: describeCause(error), request_id: context.get('requestId') })
  return new ToolError('internal', 'An unexpected error occurred.')
}

/** Node's error for a request whose connection closed mid-body ("aborted", ECONNRESET), as reading the body throws it. */
function isClientAbort(error: unknown): boolean {
  if (!(error instanceof Error)) return false
  const code = (error as NodeJS.ErrnoException).code
  return (
    (error.message === 'aborted' && (code === 'ECONNRESET' || code === undefined)) ||
    code === 'ERR_STREAM_PREMATURE_CLOSE'
  )
}

/** The one place where any thrown value becomes an HTTP response. */
export function handleError(error: unknown, context: Context, log: Logger): Response {
  return problemResponse(context, toToolError(error, context, log))
}

/** The problem document of an error, for transports that carry it inside a stream. */
export function problemBody(error: unknown, context: Context, log: Logger): Record<string, unknown> {
  return problemDocument(context, toToolError(error, context, log))
}
