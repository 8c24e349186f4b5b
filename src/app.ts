import { OpenAPIHono } from '@hono/zod-openapi'
import { createAuthenticator } from './auth'
import type { Config } from './config'
import { registerCatalogRoute } from './routes/catalog'
import { type DocsAssetLoader, registerDocsRoutes } from './routes/docs'
import type { AppEnv } from './routes/env'
import { registerHealthRoutes } from './routes/health'
import { registerOpenApiRoute } from './routes/openapi'
import { handleError, problemResponse, validationError } from './routes/problem'
import { registerToolRoutes } from './routes/tools'
import type { ShellService } from './sandbox/shell-service'
import type { ObjectStore } from './storage/store'
import { ToolError } from './tools/errors'
import { selectTools } from './tools/index'
import type { Logger, Tool } from './tools/tool'
import type { HttpClient } from './web/http'

export const serviceVersion = '0.1.0'

export interface AppDeps {
  config: Config
  storage: ObjectStore
  log: Logger
  /** Defaults to the tools config.tools enables. */
  tools?: readonly Tool[]
  docsAssets?: DocsAssetLoader
  /** The sandboxed shell for execute_command; without it the tool answers 503. */
  shell?: ShellService
  /** Why there is no shell (shown by /readyz). */
  shellProblem?: string
  /** SSRF-safe outbound HTTP for web tools and file references. */
  http?: HttpClient
}

const requestIdPattern = /^[A-Za-z0-9._:-]{1,128}$/

/** The portable Hono app: every runtime builds its deps and hands requests to this. No module state. */
export function createApp(deps: AppDeps): OpenAPIHono<AppEnv> {
  const { config, storage, log } = deps
  const tools = deps.tools ?? selectTools(config.tools)
  const authenticator = createAuthenticator(config.apiKeys)
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw validationError(result.error, result.target === 'query' ? 'query parameter' : 'input')
    },
  })

  app.use('*', async (context, next) => {
    const started = performance.now()
    const offered = context.req.header('x-request-id')
    const requestId = offered && requestIdPattern.test(offered) ? offered : crypto.randomUUID()
    context.set('requestId', requestId)
    await next()
    context.header('X-Request-Id', requestId)
    context.header('X-Content-Type-Options', 'nosniff')
    log.info('request', {
      request_id: requestId,
      method: context.req.method,
      path: context.req.path,
      status: context.res.status,
      tenant: context.get('principal')?.tenant,
      tool: context.get('tool'),
      duration_ms: Math.round(performance.now() - started),
    })
  })

  app.use('/v1/*', async (context, next) => {
    context.set('principal', await authenticator.authenticate(context.req.header('authorization')))
    context.header('Cache-Control', 'no-store')
    await next()
  })

  registerToolRoutes(app, tools, {
    storage,
    limits: { maxFileBytes: config.maxFileBytes, maxResponseChars: config.maxResponseChars },
    maxBodyBytes: config.maxBodyBytes,
    log,
    shell: deps.shell,
    http: deps.http,
  })
  registerCatalogRoute(app, tools)
  registerOpenApiRoute(app, tools, config.publicUrl, serviceVersion)
  registerDocsRoutes(app, deps.docsAssets)
  registerHealthRoutes(app, storage, {
    shell: deps.shell,
    shellProblem: deps.shellProblem,
    shellEnabled: tools.some((tool) => tool.name === 'execute_command'),
    shellRequired: config.sandbox === 'bwrap' || config.sandbox === 'process',
  })

  const toolNames = new Set(tools.map((tool) => tool.name))
  app.all('/v1/tools/:name', (context) => {
    const name = context.req.param('name')
    if (!toolNames.has(name)) {
      throw new ToolError('not_found', `There is no tool named ${JSON.stringify(name)}.`, {
        hint: 'GET /v1/tools lists the tools this service offers; use one of their names.',
      })
    }
    throw new ToolError('method_not_allowed', `${context.req.method} is not allowed on ${name}.`, {
      hint: `Call ${name} with POST and a JSON body.`,
      headers: { Allow: 'POST' },
    })
  })

  app.notFound((context) =>
    problemResponse(
      context,
      new ToolError('not_found', `No route for ${context.req.method} ${context.req.path}.`, {
        hint: 'Tools are called with POST /v1/tools/{name}; GET /v1/tools lists them and /docs documents them.',
      }),
    ),
  )
  app.onError((error, context) => handleError(error, context, log))
  return app
}
