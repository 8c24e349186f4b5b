import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi'
import type { MiddlewareHandler } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { streamSSE } from 'hono/streaming'
import { assertToolAllowed } from '../auth'
import type { ShellService } from '../sandbox/shell-service'
import type { ObjectStore } from '../storage/store'
import { ToolError } from '../tools/errors'
import { invokeTool } from '../tools/invoke'
import type { Logger, Tool, ToolEvent, ToolLimits } from '../tools/tool'
import type { HttpClient } from '../web/http'
import type { AppEnv } from './env'
import { Problem, problemBody } from './problem'

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
  shell: ShellService | undefined
  http: HttpClient | undefined
}

/** One POST /v1/tools/{name} per tool, generated from the tool's own schemas. */
export function registerToolRoutes(app: OpenAPIHono<AppEnv>, tools: readonly Tool[], deps: ToolRouteDeps): void {
  const limitBody = bodyLimit({
    maxSize: deps.maxBodyBytes,
    onError: () => {
      throw new ToolError('size_exceeded', `The request body is larger than ${deps.maxBodyBytes} bytes.`, {
        hint: `Send at most ${deps.maxBodyBytes} bytes; files may be at most ${deps.limits.maxFileBytes} bytes.`,
      })
    },
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
      middleware: [allowTool, limitBody] as const,
      request: {
        query: z.object({ workspace: WorkspaceId }),
        body: { required: true, content: { 'application/json': { schema: tool.input } } },
      },
      responses: {
        200: { description: `${tool.title}: result.`, content: { 'application/json': { schema: tool.output } } },
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
        shell: deps.shell,
        http: deps.http,
      }
      if (!wantsEventStream(context.req.header('accept'))) {
        const output = await invokeTool({ ...invocation, signal: context.req.raw.signal })
        return context.json(output as never, 200)
      }
      return streamSSE(context, async (stream) => {
        const aborted = new AbortController()
        stream.onAbort(() => aborted.abort(new Error('client disconnected')))
        const signal = AbortSignal.any([context.req.raw.signal, aborted.signal])
        await stream.writeSSE({ event: 'call', data: JSON.stringify({ tool: tool.name, title: tool.title, input }) })
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
