import { OpenAPIHono } from '@hono/zod-openapi'
import { createApprovalStore } from './approvals/store'
import { createAuthenticator } from './auth/authenticator'
import { type AppJobRunnerDeps, createAppJobRunner } from './caller/jobs'
import type { Config } from './config/config'
import { ToolError } from './core/errors'
import type { Metrics } from './core/metrics'
import { createFileLinks } from './downloads/links'
import { createLinkSigner, randomSecret } from './downloads/signing'
import type { AppEnv } from './http/env'
import { type Lifecycle, registerEdgeMiddleware, registerMetricsRoute } from './http/middleware/operations'
import { rateLimitMiddleware } from './http/middleware/rate-limit'
import { setResponseHeaders } from './http/middleware/response-headers'
import { handleError, problemResponse, validationError } from './http/problem'
import { registerApprovalRoutes } from './http/routes/approvals'
import { registerCatalogRoute } from './http/routes/catalog'
import { registerContextRoute } from './http/routes/context'
import { type DocsAssetLoader, registerDocsRoutes } from './http/routes/docs'
import { registerFileRoutes } from './http/routes/files'
import { registerHealthRoutes } from './http/routes/health'
import { registerJobRoutes } from './http/routes/jobs'
import { registerMcpRoute } from './http/routes/mcp'
import { registerOpenApiRoute } from './http/routes/openapi'
import { registerToolRoutes } from './http/routes/tools'
import type { JobRunner } from './jobs/runner'
import type { ObjectStore } from './storage/store'
import { selectTools } from './tools/builtins'
import { noServices, type ToolServices } from './tools/services'
import type { Logger, Tool } from './tools/tool'
import { createTenantQuota } from './workspace/quota'

export const serviceVersion = '0.1.0'

export interface AppDeps {
  config: Config
  storage: ObjectStore
  log: Logger
  /** Defaults to the tools config.tools enables. */
  tools?: readonly Tool[]
  docsAssets?: DocsAssetLoader
  /** Runtime services for the tools (sandbox, outbound HTTP, search, …); missing ones answer 503. */
  services?: Partial<ToolServices>
  /** Why there is no shell (shown by /readyz). */
  shellProblem?: string
  /** Prometheus metrics; /metrics exists only with them. */
  metrics?: Metrics
  /** Shutdown state: while draining, new calls get 503. */
  lifecycle?: Lifecycle
  /** Builds the job runner (default createAppJobRunner: this process's queue); Lambda dispatches instead. */
  jobRunner?: (deps: AppJobRunnerDeps) => JobRunner
}

const requestIdPattern = /^[A-Za-z0-9._:-]{1,128}$/

/** The portable Hono app: every runtime builds its deps and hands requests to this. No module state. */
export function createApp(deps: AppDeps): OpenAPIHono<AppEnv> {
  const { config, storage, log } = deps
  const tools = deps.tools ?? selectTools(config.tools)
  const authenticator = createAuthenticator(config.apiKeys)
  if (!config.links.signingSecret) {
    log.warn(
      'TOOLPORT_SIGNING_SECRET is not set: download links use a random per-process secret and stop working on restart',
    )
  }
  const signingSecret = config.links.signingSecret ?? randomSecret()
  const signer = createLinkSigner(signingSecret)
  const links = createFileLinks({
    signer,
    ttlSeconds: config.links.ttlSeconds,
    publicUrl: config.links.publicUrl,
    fallbackUrl: config.publicUrl,
  })
  const quotaBytes = config.operations.tenantQuotaBytes
  const services: ToolServices = {
    ...noServices,
    ...deps.services,
    links: deps.services?.links ?? links,
    // The usage cache lives with this app, not in the module: two apps in one process never share it.
    quota: deps.services?.quota ?? (quotaBytes ? createTenantQuota({ limitBytes: quotaBytes }) : undefined),
  }
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw validationError(result.error, result.target === 'query' ? 'query parameter' : 'input')
    },
  })

  registerEdgeMiddleware(app, {
    lifecycle: deps.lifecycle,
    corsOrigins: config.operations.corsOrigins,
    metrics: deps.metrics,
  })

  app.use('*', async (context, next) => {
    const started = performance.now()
    const offered = context.req.header('x-request-id')
    const requestId = offered && requestIdPattern.test(offered) ? offered : crypto.randomUUID()
    context.set('requestId', requestId)
    await next()
    setResponseHeaders(context, { 'X-Request-Id': requestId, 'X-Content-Type-Options': 'nosniff' })
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
    // Download links carry their own credential (the signed token), so a chat client can open them.
    if (context.req.path.startsWith('/v1/files/')) return next()
    context.set('principal', await authenticator.authenticate(context.req.header('authorization')))
    context.header('Cache-Control', 'no-store')
    await next()
  })

  // MCP clients authenticate exactly like REST callers: the same keys, tenants and tool scopes.
  app.use('/mcp', async (context, next) => {
    context.set('principal', await authenticator.authenticate(context.req.header('authorization')))
    context.header('Cache-Control', 'no-store')
    await next()
  })

  if (config.operations.rateLimit) {
    const limited = rateLimitMiddleware(config.operations.rateLimit)
    app.use('/v1/tools/*', limited)
    app.use('/mcp', limited)
  }
  if (deps.metrics && config.operations.metrics) registerMetricsRoute(app, deps.metrics, authenticator)

  const jobs = (deps.jobRunner ?? createAppJobRunner)({ config, storage, log, tools, services, secret: signingSecret })
  registerJobRoutes(app, jobs, config.links.publicUrl)

  registerFileRoutes(app, storage, signer)
  // Synchronous calls (REST, MCP) get the per-call deadline; ?async=true jobs run without it.
  const callLimits = {
    maxFileBytes: config.maxFileBytes,
    maxResponseChars: config.maxResponseChars,
    ...(config.operations.callTimeoutSeconds ? { callTimeoutMs: config.operations.callTimeoutSeconds * 1000 } : {}),
  }
  const approvalStore = createApprovalStore(storage)
  registerToolRoutes(app, tools, {
    storage,
    limits: callLimits,
    maxBodyBytes: config.maxBodyBytes,
    log,
    services,
    jobs,
    syncTimeoutMs: config.jobs.syncTimeoutSeconds * 1000,
    approvals: {
      store: approvalStore,
      storage,
      limits: callLimits,
      services,
      ttlSeconds: config.approvals?.ttlSeconds ?? 3600,
      publicUrl: config.links.publicUrl,
    },
  })
  registerApprovalRoutes(app, { store: approvalStore, tools, storage, limits: callLimits, log, services })
  registerCatalogRoute(app, tools)
  const limits = { maxFileBytes: config.maxFileBytes, maxResponseChars: config.maxResponseChars }
  registerMcpRoute(app, tools, {
    storage,
    limits: callLimits,
    maxBodyBytes: config.maxBodyBytes,
    log,
    services,
    version: serviceVersion,
    publicUrl: config.publicUrl,
  })
  registerContextRoute(app, tools, { storage, limits })
  registerOpenApiRoute(app, tools, config.publicUrl, serviceVersion)
  registerDocsRoutes(app, deps.docsAssets)
  registerHealthRoutes(app, storage, {
    shell: services.shell,
    shellProblem: deps.shellProblem,
    shellEnabled: tools.some((tool) => tool.name === 'execute_command'),
    shellRequired: config.sandbox === 'bwrap' || config.sandbox === 'process',
    browser: services.browser,
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
