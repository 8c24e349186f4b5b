import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Context, MiddlewareHandler } from 'hono'
import { streamSSE } from 'hono/streaming'
import { assertToolAllowed } from '../../auth/principal'
import type { Call } from '../../caller/call'
import type { Caller } from '../../caller/caller'
import { ToolError } from '../../core/errors'
import type { Logger } from '../../core/logger'
import { jobStatusUrl, publicJob } from '../../jobs/types'
import { stripNullOptionalsChanged } from '../../platforms/nulls'
import { type Tool, type ToolEvent, titleOfCall } from '../../tools/tool'
import { assertCleanJson, decodeUtf8Body } from '../body'
import type { AppEnv } from '../env'
import { limitBody } from '../middleware/body-limit'
import { nodeDisconnect } from '../node-bindings'
import { problemBody, validationError } from '../problem'
import { knownQuery } from '../query'
import { RestCall } from '../rest-call'
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
 * found by name when the call arrives. The handler only translates: the request into a Call, and the
 * caller's outcome into JSON (200 result, 202 job or pending approval, dry-run preview) or an event
 * stream (call, output…, result or error).
 */
export function registerToolRoutes(app: OpenAPIHono<AppEnv>, deps: ToolRouteDeps): void {
  const { caller } = deps
  const limitedBody = limitBody(
    deps.maxBodyBytes,
    `Send at most ${deps.maxBodyBytes} bytes; files may be at most ${deps.maxFileBytes} bytes.`,
  )
  // Found and checked before the body is read, so a key learns nothing about tools it may not use.
  const findTool: MiddlewareHandler<AppEnv> = async (context, next) => {
    const principal = context.get('principal')
    const tool = await caller.registry.resolve(principal.tenant, context.req.param('name') ?? '')
    assertToolAllowed(principal, tool)
    context.set('tool', tool.name)
    context.set('toolSource', tool.source)
    if (tool.tenantSource) context.set('toolOfTenant', true)
    context.set('callTool', tool)
    await next()
  }
  app.post('/v1/tools/:name', findTool, limitedBody, async (context) => {
    const tool = context.get('callTool')
    const query = ToolQuery.safeParse(knownQuery(context.req.url, toolQueryNames))
    if (!query.success) throw validationError(query.error, 'query parameter')
    const disconnect = nodeDisconnect(context)
    const call = new RestCall(
      context,
      tool,
      await readInput(context, tool, caller),
      context.get('principal'),
      query.data.workspace,
      disconnect,
    )
    const admission = await caller.admit(call, { dryRun: query.data.dry_run === true })
    if (admission?.kind === 'dry_run') {
      const { kind: _, ...fitted } = admission
      return context.json({ dry_run: true, ...fitted }, 200)
    }
    if (admission?.kind === 'pending_approval') return context.json(admission.pending, 202)
    const wantsAsync = query.data.async === true || /\brespond-async\b/i.test(context.req.header('prefer') ?? '')
    if (wantsEventStream(context.req.header('accept'))) {
      // A stream is this call's output as it runs; a job answers at once and runs later: not both.
      if (wantsAsync) throw streamOrJob()
      return streamCall(context, caller, call, deps.log)
    }
    const outcome = await caller.run(call, { async: wantsAsync, callbackUrl: query.data.callback_url ?? null })
    if ('output' in outcome) return context.json(outcome.output as object, 200)
    const statusUrl = jobStatusUrl(call.origin as string, outcome.job.id)
    context.header('Location', statusUrl)
    return context.json(publicJob(outcome.job, statusUrl), 202)
  })
}

/**
 * The body as the tool's input: JSON only (415 otherwise), the nulls strict-mode platforms send for
 * unset optional fields dropped, then the tool's own schema (400 naming the first failing field).
 */
async function readInput(context: Context<AppEnv>, tool: Tool, caller: Caller): Promise<unknown> {
  const contentType = context.req.header('content-type') ?? ''
  const mediaType = contentType.split(';')[0]?.trim() ?? ''
  const bytes = await context.req.arrayBuffer()
  if (mediaType !== '' && !jsonMediaType.test(mediaType)) throw unsupportedMediaType()
  // A compressed body would be parsed as the JSON it is not.
  const encoding = context.req.header('content-encoding')?.trim().toLowerCase()
  if (encoding && encoding !== 'identity') {
    throw new ToolError('unsupported_media_type', `The request body is ${encoding}-encoded; bodies are read as sent.`, {
      hint: 'Send the JSON body uncompressed, without a Content-Encoding header.',
    })
  }
  if (mediaType === '' && bytes.byteLength > 0) throw unsupportedMediaType()
  // JSON is UTF-8 (RFC 8259): a body declared in another charset would be read as what it is not.
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1]?.toLowerCase()
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') throw unsupportedMediaType()
  const text = decodeUtf8Body(bytes)
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    throw new ToolError('validation', 'The request body is not valid JSON.', {
      hint: 'Send a JSON object as the body, with the header "Content-Type: application/json".',
    })
  }
  assertCleanJson(text, body)
  const schema = caller.registry.inputSchema(tool)
  // A body without the text "null" holds no null to drop: the walk over the schema is skipped.
  if (text.includes('null')) stripNullOptionalsChanged(body, schema)
  const parsed = tool.input.safeParse(body)
  if (!parsed.success) throw validationError(parsed.error, 'input', schema)
  return parsed.data
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
function streamCall(context: Context<AppEnv>, caller: Caller, call: Call, log: Logger): Response {
  const tool: Tool = call.tool
  return streamSSE(context, async (stream) => {
    const aborted = new AbortController()
    stream.onAbort(() => aborted.abort(new Error('client disconnected')))
    const signal = AbortSignal.any([call.signal, aborted.signal])
    await stream.writeSSE({
      event: 'call',
      data: JSON.stringify({ tool: tool.name, title: titleOfCall(tool, call.input), input: call.input }),
    })
    // Output events are queued in order; the final event waits for them.
    let pending = Promise.resolve()
    const emit = (event: ToolEvent) => {
      pending = pending.then(() => stream.writeSSE({ event: 'output', data: JSON.stringify(event) }))
    }
    try {
      const output = await caller.invoke({ ...call, signal, emit })
      await pending
      await stream.writeSSE({ event: 'result', data: JSON.stringify(output) })
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
