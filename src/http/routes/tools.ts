import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Context, MiddlewareHandler } from 'hono'
import { streamSSE } from 'hono/streaming'
import type { AdmittedCall, Disconnect } from '../../caller/call'
import type { Caller } from '../../caller/caller'
import { ToolError } from '../../core/errors'
import type { Logger } from '../../core/logger'
import { carrierOf } from '../../core/tracing'
import { validationError } from '../../core/validation'
import { jobStatusUrl, publicJob } from '../../jobs/types'
import { type ToolEvent, titleOfCall } from '../../tools/tool'
import { assertCleanJson, decodeUtf8Body } from '../body'
import { labelCall, requestDisconnect } from '../call-facts'
import type { AppEnv } from '../env'
import { limitBody } from '../middleware/body-limit'
import { problemBody } from '../problem'
import { knownQuery } from '../query'
import { ToolQuery } from './tool-route'

export interface ToolRouteDeps {
  caller: Caller
  maxBodyBytes: number
  maxFileBytes: number
  log: Logger
}

const jsonMediaType = /^application\/([\w.-]+\+)?json$/i
const toolQueryNames = Object.keys(ToolQuery.shape)

/**
 * POST /v1/tools/{name}, for every tool of the caller's catalog: built-ins and source tools alike are
 * found by name when the call arrives. The handler only translates: the request into the caller's
 * prepare (the body is read once the tool is found and allowed), and the caller's outcome into JSON
 * (200 result, 202 job or pending approval, dry-run preview) or an event stream (call, output…,
 * result or error).
 */
export function registerToolRoutes(app: OpenAPIHono<AppEnv>, deps: ToolRouteDeps): void {
  const { caller } = deps
  const limitedBody = limitBody(
    deps.maxBodyBytes,
    `Send at most ${deps.maxBodyBytes} bytes; files may be at most ${deps.maxFileBytes} bytes.`,
  )
  app.post('/v1/tools/:name', async (context) => {
    const query = ToolQuery.safeParse(knownQuery(context.req.url, toolQueryNames))
    if (!query.success) throw validationError(query.error, 'query parameter')
    const principal = context.get('principal')
    const call = await caller.prepare({
      principal,
      tool: context.req.param('name') ?? '',
      readInput: () => readInput(context, limitedBody),
      // No ?workspace=: a token's workspace claim, else "default".
      workspaceId:
        context.req.query('workspace') === undefined
          ? (principal.defaultWorkspace ?? query.data.workspace)
          : query.data.workspace,
      origin: context.get('linkOrigin'),
      found: (entry) => labelCall(context, entry),
      // The caller's W3C trace context: the call's span joins that trace (when tracing is on).
      trace: carrierOf((name) => context.req.header(name)),
      requestId: context.get('requestId'),
    })
    const admission = await caller.admit(call, { dryRun: query.data.dry_run === true })
    if (admission.kind === 'dry_run') {
      const { kind: _, ...fitted } = admission
      return context.json({ dry_run: true, ...fitted }, 200)
    }
    if (admission.kind === 'pending_approval') return context.json(admission.pending, 202)
    const wantsAsync = query.data.async === true || /\brespond-async\b/i.test(context.req.header('prefer') ?? '')
    if (wantsEventStream(context.req.header('accept'))) {
      // A stream is this call's output as it runs; a job answers at once and runs later: not both.
      if (wantsAsync) throw streamOrJob()
      return streamCall(context, caller, admission.call, deps.log)
    }
    const outcome = await caller.run(admission.call, {
      mode: wantsAsync ? 'job' : 'sync',
      disconnect: requestDisconnect(context),
      callbackUrl: query.data.callback_url ?? null,
    })
    if ('output' in outcome) return context.json(outcome.output as object, 200)
    const statusUrl = jobStatusUrl(call.origin as string, outcome.job.id)
    context.header('Location', statusUrl)
    return context.json(publicJob(outcome.job, statusUrl), 202)
  })
}

/**
 * The body as JSON, within the body limit: JSON only (415 otherwise), UTF-8, uncompressed, with no
 * lone surrogate or __proto__ key. The caller parses it against the tool's schema.
 */
async function readInput(context: Context<AppEnv>, limitedBody: MiddlewareHandler): Promise<unknown> {
  let bytes: ArrayBuffer | undefined
  // The limit's middleware, run around the read: an over-long body is 413 as it would be before the route.
  await limitedBody(context, async () => {
    bytes = await context.req.arrayBuffer()
  })
  const contentType = context.req.header('content-type') ?? ''
  const mediaType = contentType.split(';')[0]?.trim() ?? ''
  if (mediaType !== '' && !jsonMediaType.test(mediaType)) throw unsupportedMediaType()
  // A compressed body would be parsed as the JSON it is not.
  const encoding = context.req.header('content-encoding')?.trim().toLowerCase()
  if (encoding && encoding !== 'identity') {
    throw new ToolError('unsupported_media_type', `The request body is ${encoding}-encoded; bodies are read as sent.`, {
      hint: 'Send the JSON body uncompressed, without a Content-Encoding header.',
    })
  }
  const body = bytes as ArrayBuffer
  if (mediaType === '' && body.byteLength > 0) throw unsupportedMediaType()
  // JSON is UTF-8 (RFC 8259): a body declared in another charset would be read as what it is not.
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1]?.toLowerCase()
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') throw unsupportedMediaType()
  const text = decodeUtf8Body(body)
  // No body at all is no input: a tool whose input has no required field is called as with {}.
  if (text.trim() === '') return {}
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new ToolError('validation', 'The request body is not valid JSON.', {
      hint: 'Send a JSON object as the body, with the header "Content-Type: application/json".',
    })
  }
  assertCleanJson(text, value)
  return value
}

function streamOrJob(): ToolError {
  return new ToolError(
    'validation',
    'The call asks for both a job (async) and an event stream (Accept: text/event-stream).',
    {
      hint: 'Send ?async=true (or Prefer: respond-async) for a job to poll, or Accept: text/event-stream to follow the call, not both.',
      details: { field: 'async' },
    },
  )
}

function unsupportedMediaType(): ToolError {
  return new ToolError('unsupported_media_type', 'The request body must be JSON.', {
    hint: 'Send the header "Content-Type: application/json" (UTF-8, no other charset) with a JSON object body.',
  })
}

/** The call as server-sent events: `call`, then `output` events as the tool reports them, then `result` or `error`. */
function streamCall(context: Context<AppEnv>, caller: Caller, call: AdmittedCall, log: Logger): Response {
  const { tool } = call.entry
  return streamSSE(context, async (stream) => {
    const request = requestDisconnect(context)
    // The client is gone when its request ends or the stream can no longer be written.
    const disconnect: Disconnect = (listener) => {
      stream.onAbort(() => listener(new Error('client disconnected')))
      return request((reason) => listener(reason))
    }
    await stream.writeSSE({
      event: 'call',
      data: JSON.stringify({ tool: call.entry.name, title: titleOfCall(tool, call.input), input: call.input }),
    })
    // Output events are queued in order; the final event waits for them.
    let pending = Promise.resolve()
    const emit = (event: ToolEvent) => {
      // output, progress and log events, each under its own name
      pending = pending.then(() => stream.writeSSE({ event: event.type, data: JSON.stringify(event) }))
    }
    try {
      const outcome = await caller.run(call, { mode: 'now', disconnect, emit })
      await pending
      await stream.writeSSE({ event: 'result', data: JSON.stringify((outcome as { output: unknown }).output) })
    } catch (error) {
      await pending
      await stream.writeSSE({ event: 'error', data: JSON.stringify(problemBody(error, context, log)) })
    }
  })
}

/** True when the client asked for server-sent events rather than one JSON answer (q=0 refuses them). */
function wantsEventStream(accept: string | undefined): boolean {
  return (
    accept?.split(',').some((part) => {
      const [type, ...parameters] = part.split(';').map((piece) => piece.trim().toLowerCase())
      return type === 'text/event-stream' && !parameters.some((parameter) => /^q\s*=\s*0(\.0{0,3})?$/.test(parameter))
    }) ?? false
  )
}
