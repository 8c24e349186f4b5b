import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi'
import type { MiddlewareHandler } from 'hono'
import { streamSSE } from 'hono/streaming'
import { type ApprovalDeps, dryRunOf, gateCall } from '../../approvals/store'
import { assertToolAllowed } from '../../auth/authenticator'
import { invokeTool } from '../../caller/invoke'
import { ToolError } from '../../core/errors'
import type { JobRunner } from '../../jobs/runner'
import { type JobRecord, publicJob } from '../../jobs/types'
import type { ObjectStore } from '../../storage/store'
import type { ToolServices } from '../../tools/services'
import { type Logger, type Tool, type ToolEvent, type ToolLimits, titleOfCall } from '../../tools/tool'
import type { AppEnv } from '../env'
import { limitBody } from '../middleware/body-limit'
import { stripNullFields } from '../middleware/null-fields'
import { Problem, problemBody } from '../problem'
import { inputSchemaOf } from './catalog'
import { Job, jobStatusUrl } from './jobs'

export const WorkspaceId = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,64}$/)
  .refine((value) => !/^\.+$/.test(value), 'must not be only dots')
  .default('default')
  .openapi({
    param: { name: 'workspace', in: 'query' },
    description: 'Workspace id; every path of the call is relative to it. Default: "default".',
    example: 'default',
  })

const AsyncFlag = z
  .enum(['true', 'false'])
  .optional()
  .openapi({
    param: { name: 'async', in: 'query' },
    description: 'true: answer 202 at once with a job to poll (GET /v1/jobs/{id}) instead of waiting for the result.',
  })

const CallbackUrl = z
  .url({ protocol: /^https?$/ })
  .max(2048)
  .optional()
  .openapi({
    param: { name: 'callback_url', in: 'query' },
    description: 'With a job: POST the finished job here, signed with X-Toolport-Signature (see the README).',
  })

const DryRunFlag = z
  .enum(['true', 'false'])
  .optional()
  .openapi({
    param: { name: 'dry_run', in: 'query' },
    description:
      'true: change nothing and return { dry_run: true, preview } (a unified diff, or what would be deleted).',
  })

const problemContent = { 'application/problem+json': { schema: Problem } }

function errorResponses(tool: Tool) {
  const responses: Record<number, { description: string; content: typeof problemContent }> = {
    400: { description: 'Invalid input: the problem names the field and gives a hint.', content: problemContent },
    401: { description: 'Missing or invalid bearer key.', content: problemContent },
    403: { description: 'The key may not call this tool, or the operation is not allowed.', content: problemContent },
    413: { description: 'The body or a file is larger than allowed.', content: problemContent },
    415: { description: 'The body is not JSON.', content: problemContent },
    500: { description: 'Unexpected server error.', content: problemContent },
    503: { description: 'A backing service (storage) is unavailable; retry later.', content: problemContent },
  }
  responses[404] = { description: 'The file, folder or text to work on does not exist.', content: problemContent }
  if (tool.effect !== 'read') {
    responses[409] = { description: 'The target is in a conflicting state.', content: problemContent }
  }
  return responses
}

export interface ToolRouteDeps {
  storage: ObjectStore
  limits: ToolLimits
  maxBodyBytes: number
  log: Logger
  services: ToolServices
  jobs?: JobRunner
  /** A synchronous call still running after this long becomes a job (0 or unset: never). */
  syncTimeoutMs?: number
  /** ?dry_run=true and keys that require approval (src/approvals); unset: neither. */
  approvals?: ApprovalDeps
}

/** One POST /v1/tools/{name} per tool, generated from the tool's own schemas. */
export function registerToolRoutes(app: OpenAPIHono<AppEnv>, tools: readonly Tool[], deps: ToolRouteDeps): void {
  const limitedBody = limitBody(deps.maxBodyBytes, () => {
    throw new ToolError('size_exceeded', `The request body is larger than ${deps.maxBodyBytes} bytes.`, {
      hint: `Send at most ${deps.maxBodyBytes} bytes; files may be at most ${deps.limits.maxFileBytes} bytes.`,
    })
  })
  for (const tool of tools) {
    // Permission is checked before the body is read, so a key learns nothing about tools it may not use.
    const allowTool: MiddlewareHandler<AppEnv> = async (context, next) => {
      assertToolAllowed(context.get('principal'), tool.name)
      await next()
    }
    const route = createRoute({
      method: 'post',
      path: `/v1/tools/${tool.name}`,
      operationId: tool.name,
      summary: tool.title,
      description: tool.description,
      tags: ['tools'],
      security: [{ bearerAuth: [] }],
      middleware: [allowTool, limitedBody, stripNullFields(() => inputSchemaOf(tool))] as const,
      request: {
        query: z.object({
          workspace: WorkspaceId,
          async: AsyncFlag,
          callback_url: CallbackUrl,
          ...(dryRunOf(tool) ? { dry_run: DryRunFlag } : {}),
        }),
        body: { required: true, content: { 'application/json': { schema: tool.input } } },
      },
      responses: {
        200: { description: `${tool.title}: result.`, content: { 'application/json': { schema: tool.output } } },
        202: {
          description:
            'Accepted as a job (async=true, or the call outlasted the synchronous limit): poll status_url. For a key that requires approval: { status: "pending_approval", approval_id, approve_url, preview }.',
          content: { 'application/json': { schema: Job } },
        },
        ...errorResponses(tool),
      },
    })
    app.openapi(route, async (context) => {
      context.set('tool', tool.name)
      const input = context.req.valid('json')
      const invocation = {
        tool,
        input,
        principal: context.get('principal'),
        workspaceId: context.req.valid('query').workspace,
        storage: deps.storage,
        limits: deps.limits,
        log: deps.log,
        services: deps.services,
        origin: new URL(context.req.url).origin,
      }
      if (deps.approvals) {
        const gated = await gateCall(deps.approvals, {
          ...invocation,
          dryRun: context.req.query('dry_run') === 'true',
        })
        if (gated) return context.json(gated.body as never, gated.status)
      }
      if (!wantsEventStream(context.req.header('accept'))) {
        const query = context.req.valid('query')
        const spec = {
          tenant: invocation.principal.tenant,
          principal: {
            id: invocation.principal.id,
            tools: invocation.principal.tools ? [...invocation.principal.tools] : null,
          },
          tool: tool.name,
          workspace: invocation.workspaceId,
          input,
          origin: invocation.origin,
          callback_url: query.callback_url ?? null,
        }
        const accepted = (job: JobRecord) => {
          const statusUrl = jobStatusUrl(invocation.origin, job.id)
          context.header('Location', statusUrl)
          return context.json(publicJob(job, statusUrl) as never, 202)
        }
        const wantsAsync = query.async === 'true' || /\brespond-async\b/i.test(context.req.header('prefer') ?? '')
        if (wantsAsync && deps.jobs) return accepted(await deps.jobs.submit(spec))
        if (!deps.jobs || !deps.syncTimeoutMs || deps.syncTimeoutMs <= 0) {
          const output = await invokeTool({ ...invocation, signal: context.req.raw.signal })
          return context.json(output as never, 200)
        }
        // The call's own signal: a disconnect cancels it only while it is still a synchronous call.
        const controller = new AbortController()
        let converted = false
        const onDisconnect = () => {
          if (!converted) controller.abort(new Error('client disconnected'))
        }
        context.req.raw.signal.addEventListener('abort', onDisconnect, { once: true })
        const work = invokeTool({ ...invocation, signal: controller.signal })
        let timer: ReturnType<typeof setTimeout> | undefined
        const outcome = await Promise.race([
          work.then(
            (output) => ({ output }),
            (error: unknown) => ({ error }),
          ),
          new Promise<'slow'>((resolve) => {
            timer = setTimeout(() => resolve('slow'), deps.syncTimeoutMs)
          }),
        ])
        clearTimeout(timer)
        if (outcome === 'slow') {
          converted = true
          return accepted(await deps.jobs.adopt(spec, work, controller))
        }
        context.req.raw.signal.removeEventListener('abort', onDisconnect)
        if ('error' in outcome) throw outcome.error
        return context.json(outcome.output as never, 200)
      }
      return streamSSE(context, async (stream) => {
        const aborted = new AbortController()
        stream.onAbort(() => aborted.abort(new Error('client disconnected')))
        const signal = AbortSignal.any([context.req.raw.signal, aborted.signal])
        await stream.writeSSE({
          event: 'call',
          data: JSON.stringify({ tool: tool.name, title: titleOfCall(tool, input), input }),
        })
        // Output events are queued in order; the final event waits for them.
        let pending = Promise.resolve()
        const emit = (event: ToolEvent) => {
          pending = pending.then(() => stream.writeSSE({ event: 'output', data: JSON.stringify(event) }))
        }
        try {
          const output = await invokeTool({ ...invocation, signal, emit })
          await pending
          await stream.writeSSE({ event: 'result', data: JSON.stringify(output) })
        } catch (error) {
          await pending
          await stream.writeSSE({ event: 'error', data: JSON.stringify(problemBody(error, context, deps.log)) })
        }
      }) as never
    })
  }
}

/** True when the client asked for server-sent events rather than one JSON answer. */
function wantsEventStream(accept: string | undefined): boolean {
  return accept?.split(',').some((part) => part.trim().toLowerCase().startsWith('text/event-stream')) ?? false
}
