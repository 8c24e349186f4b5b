import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Context, MiddlewareHandler } from 'hono'
import { streamSSE } from 'hono/streaming'
import { assertToolAllowed } from '../../auth/principal'
import type { Call } from '../../caller/call'
import type { Caller } from '../../caller/caller'
import type { Logger } from '../../core/logger'
import { publicJob } from '../../jobs/types'
import { type Tool, type ToolEvent, titleOfCall } from '../../tools/tool'
import type { AppEnv } from '../env'
import { limitBody } from '../middleware/body-limit'
import { stripNullFields } from '../middleware/null-fields'
import { problemBody } from '../problem'
import { jobStatusUrl } from './jobs'
import { toolRoute } from './tool-route'

export interface ToolRouteDeps {
  caller: Caller
  maxBodyBytes: number
  maxFileBytes: number
  log: Logger
}

/**
 * One POST /v1/tools/{name} per tool. The handler only translates: the request into a Call, and the
 * caller's outcome into JSON (200 result, 202 job or pending approval, dry-run preview) or an event
 * stream (call, output…, result or error).
 */
export function registerToolRoutes(app: OpenAPIHono<AppEnv>, deps: ToolRouteDeps): void {
  const { caller } = deps
  const limitedBody = limitBody(
    deps.maxBodyBytes,
    `Send at most ${deps.maxBodyBytes} bytes; files may be at most ${deps.maxFileBytes} bytes.`,
  )
  for (const tool of caller.registry.tools) {
    // Permission is checked before the body is read, so a key learns nothing about tools it may not use.
    const allowTool: MiddlewareHandler<AppEnv> = async (context, next) => {
      assertToolAllowed(context.get('principal'), tool.name)
      await next()
    }
    const route = toolRoute(tool, [
      allowTool,
      limitedBody,
      stripNullFields(() => caller.registry.inputSchema(tool)),
    ] as MiddlewareHandler[])
    app.openapi(route, async (context) => {
      context.set('tool', tool.name)
      const query = context.req.valid('query')
      const call: Call = {
        tool,
        input: context.req.valid('json'),
        principal: context.get('principal'),
        workspaceId: query.workspace,
        origin: context.get('linkOrigin'),
        signal: context.req.raw.signal,
      }
      const admission = await caller.admit(call, { dryRun: context.req.query('dry_run') === 'true' })
      if (admission?.kind === 'dry_run') {
        const { kind: _, ...fitted } = admission
        return context.json({ dry_run: true, ...fitted } as never, 200)
      }
      if (admission?.kind === 'pending_approval') return context.json(admission.pending as never, 202)
      if (wantsEventStream(context.req.header('accept'))) return streamCall(context, caller, call, deps.log) as never
      const wantsAsync = query.async === 'true' || /\brespond-async\b/i.test(context.req.header('prefer') ?? '')
      const outcome = await caller.run(call, { async: wantsAsync, callbackUrl: query.callback_url ?? null })
      if ('output' in outcome) return context.json(outcome.output as never, 200)
      const statusUrl = jobStatusUrl(call.origin as string, outcome.job.id)
      context.header('Location', statusUrl)
      return context.json(publicJob(outcome.job, statusUrl) as never, 202)
    })
  }
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

/** True when the client asked for server-sent events rather than one JSON answer. */
function wantsEventStream(accept: string | undefined): boolean {
  return accept?.split(',').some((part) => part.trim().toLowerCase().startsWith('text/event-stream')) ?? false
}
