import { OpenAPIHono } from '@hono/zod-openapi'
import type { Context } from 'hono'
import type { JWK } from 'jose'
import { createApprovalStore } from './approvals/store'
import { type AuditLog, createAuditLog } from './audit/audit-log'
import { createAuthenticator, requiredApprovals } from './auth/authenticator'
import { createTokenVerifier } from './auth/oauth/token-verifier'
import { type Caller, createCaller } from './caller/caller'
import { createCatalog } from './catalog/catalog'
import type { Config } from './config/config'
import { type Audit, noAudit } from './core/audit'
import type { Logger } from './core/logger'
import type { Metrics } from './core/metrics'
import { ConfigError } from './core/settings'
import type { Tracing } from './core/tracing'
import { validationError } from './core/validation'
import { createFileLinks } from './downloads/links'
import { createLinkSigner, randomSecret } from './downloads/signing'
import type { AppEnv } from './http/env'
import { authenticate } from './http/middleware/authenticate'
import { corsFor } from './http/middleware/cors'
import { type Lifecycle, refuseWhileDraining } from './http/middleware/drain'
import { linkOrigin } from './http/middleware/link-origin'
import { type RateLimit, type RateLimiter, rateLimitMiddleware } from './http/middleware/rate-limit'
import { requestContext } from './http/middleware/request-context'
import { handleError } from './http/problem'
import { registerApprovalRoutes } from './http/routes/approvals'
import { registerCatalogRoute } from './http/routes/catalog'
import { registerContextRoute } from './http/routes/context'
import { type DocsAssetLoader, registerDocsRoutes } from './http/routes/docs'
import { registerFallbacks } from './http/routes/fallback'
import { registerFileRoutes } from './http/routes/files'
import { registerHealthRoutes } from './http/routes/health'
import { registerJobRoutes } from './http/routes/jobs'
import { registerMcpRoute } from './http/routes/mcp'
import { registerMetricsRoute } from './http/routes/metrics'
import { registerOpenApiRoute } from './http/routes/openapi'
import { registerOperationRoutes } from './http/routes/operations'
import { registerResourceMetadataRoutes } from './http/routes/resource-metadata'
import { registerSourceManifestSchemaRoute } from './http/routes/source-schema'
import { registerSourceRoutes } from './http/routes/sources'
import { registerToolRoutes } from './http/routes/tools'
import type { Delivery } from './jobs/callback'
import type { JobDispatch } from './jobs/runner'
import type { JobRecord } from './jobs/types'
import type { HttpClient } from './net/http'
import { compatFeed } from './sources/compat/feed'
import { createSourceHost, type SourceHost } from './sources/host/source-host'
import type { ProcessStarter } from './sources/types'
import type { ObjectStore } from './storage/store'
import { selectTools } from './tools/builtins'
import { noServices, type ToolServices } from './tools/services'
import { withShellDefaults } from './tools/shell/configured'
import type { Tool } from './tools/tool'
import { createUsageLedger, type UsageLedger } from './usage/usage-meter'
import { createTenantQuota } from './workspace/quota'

export const serviceVersion = '0.1.0'

export interface AppDeps {
  config: Config
  storage: ObjectStore
  log: Logger
  /** The built-in authorization server, when TOOLPORT_OAUTH_ISSUER=builtin (Node provides it). */
  oauthServer?: OAuthServerMount
  /** Defaults to the built-in tools config.sources enables. */
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
  /**
   * The origin a request really came in on, when the runtime knows it better than the Host header
   * (Lambda: the domain API Gateway or the function URL service reports). Links use it.
   */
  vouchedOrigin?: (request: Request, env: unknown) => string | undefined
  /** Where jobs run: unset, this process's queue; Lambda hands each to an invocation of its own. */
  jobDispatch?: JobDispatch
  /** What tool sources need from the runtime; false: built-in tools only. */
  sources?: SourceRuntime | false
  /** A fleet engine (Node on Redis): jobs, cancels, limits and catalog changes shared by every instance. */
  fleet?: Fleet
  /** OpenTelemetry tracing (runtimes/otel-tracing.ts), when the OTEL_* variables turn it on; default off. */
  tracing?: Tracing
  /**
   * The audit log, when the runtime made it (createAppAudit) to share it with the built-in authorization
   * server; otherwise the app makes its own as TOOLPORT_AUDIT says.
   */
  audit?: AuditLog | undefined
}

/** What a fleet engine lends the app (src/runtimes/fleet/redis-engine.ts implements it). */
/** The built-in authorization server (TOOLPORT_OAUTH_ISSUER=builtin), which the Node runtime provides. */
export interface OAuthServerMount {
  issuer: string
  /** Its signing keys' public halves: its tokens are verified with them, without a request. */
  publicKeys: JWK[]
  /** Serves /oauth/… (the protocol endpoints, the sign-in and consent pages). */
  serve(context: Context<AppEnv>): Promise<Response>
}

export interface Fleet {
  dispatch: JobDispatch
  announceCancel(job: JobRecord): void
  /** Queues a webhook delivery (retried with backoff by whichever instance is up). */
  deliver(delivery: Delivery): Promise<void>
  rateLimiter(limit: RateLimit): RateLimiter
  announceCatalogChange(tenant: string | undefined): void
  onCatalogChange(listener: (tenant: string | undefined) => void): void
}

/** With a fleet engine announcing every change, the storage poll is only a slow fallback. */
const fleetSourcePollMs = 300_000

/** The runtime's part in tool sources. */
export interface SourceRuntime {
  /** Starts sandboxed processes for stdio MCP servers; unset: such sources are in error. */
  processes?: ProcessStarter
  /** An outbound client that also allows the hosts an operator manifest names. */
  httpAllowing?: (hosts: readonly string[]) => HttpClient
  /** Whether connections and processes may stay open between calls (false on Lambda). Default true. */
  keepWarm?: boolean
  /** Values for operator manifests' { "secret": NAME }: the server's environment. */
  environment?: Readonly<Record<string, string | undefined>>
}

/**
 * The app and what a runtime drives besides requests: the caller (whose job runner Lambda's job
 * invocations run) and the live sources (the runtime feeds its folder in and closes them at exit).
 */
export interface App {
  app: OpenAPIHono<AppEnv>
  caller: Caller
  /** Undefined with sources off. */
  sources: SourceHost | undefined
  /** The audit log (undefined with TOOLPORT_AUDIT=false). */
  audit: AuditLog | undefined
  /** Usage per tenant: the runtime flushes it after a Lambda invocation and closes it at shutdown. */
  usage: UsageLedger | undefined
}

/** The audit log TOOLPORT_AUDIT asks for, in the service's bucket; undefined when it is off. */
export function createAppAudit(config: Config, storage: ObjectStore, log: Logger): AuditLog | undefined {
  if (!config.audit.enabled) return undefined
  return createAuditLog({ storage, log, retentionDays: config.audit.retentionDays })
}

/** The portable Hono app: every runtime builds its deps and hands requests to it. No module state. */
export function createApp(deps: AppDeps): App {
  const { config, storage, log } = deps
  const builtins = withShellDefaults(deps.tools ?? selectTools(config.sources.enabled), {
    defaultTimeoutSeconds: config.sandbox.defaultTimeoutSeconds,
  })
  const oauth = oauthResource(config, deps.oauthServer)
  const authenticator = createAuthenticator(config.apiKeys, {
    approvalPolicy: config.approvals.policy,
    tokens: oauth
      ? createTokenVerifier({
          settings: { ...config.oauth, issuer: oauth.issuer },
          audiences: [oauth.publicUrl, `${oauth.publicUrl}/mcp`],
          approvalPolicy: config.approvals.policy,
          ...(deps.oauthServer ? { localKeys: deps.oauthServer.publicKeys } : {}),
        })
      : undefined,
  })
  warnUnapprovable(config, log)
  const publicUrl = config.http.configuredPublicUrl
  if (!config.downloads.signingSecret) {
    log.warn(
      'TOOLPORT_SIGNING_SECRET is not set: download links use a random per-process secret and stop working on restart',
    )
  }
  const signingSecret = config.downloads.signingSecret ?? randomSecret()
  const signer = createLinkSigner(signingSecret)
  const quotaBytes = config.workspace.tenantQuotaBytes
  const services: Omit<ToolServices, 'jobs'> = {
    ...noServices,
    ...deps.services,
    links:
      deps.services?.links ??
      createFileLinks({
        signer,
        ttlSeconds: config.downloads.ttlSeconds,
        publicUrl,
        fallbackUrl: config.http.publicUrl,
      }),
    // The usage cache lives with this app, not in the module: two apps in one process never share it.
    quota: deps.services?.quota ?? (quotaBytes ? createTenantQuota({ limitBytes: quotaBytes }) : undefined),
  }
  const auditLog = deps.audit ?? createAppAudit(config, storage, log)
  const audit: Audit = auditLog ?? noAudit
  // Usage is counted with the audit log's switch: both are what an operator keeps of every call.
  const usage = config.audit.enabled
    ? createUsageLedger({ storage, log, flushMs: config.audit.usageFlushMs })
    : undefined
  deps.metrics?.countUsage?.(() => usage?.totals() ?? [])
  if (usage) {
    deps.services?.browserSessions?.onEnded?.((tenant, seconds) =>
      usage.add(tenant, { browserSessionSeconds: seconds }),
    )
  }
  const sources = deps.sources === false ? undefined : createAppSources(deps, builtins, services)
  const catalog = createCatalog(builtins, sources)
  const caller = createCaller({
    catalog,
    storage,
    settings: config.calls,
    services,
    log,
    ...(deps.tracing ? { tracing: deps.tracing } : {}),
    audit,
    auditInputs: config.audit.inputs,
    ...(usage ? { usage } : {}),
    approvals: {
      store: createApprovalStore(storage),
      ttlSeconds: config.approvals.ttlSeconds,
      publicUrl,
      webhook: config.approvals.webhookUrl ? { url: config.approvals.webhookUrl, secret: signingSecret } : undefined,
    },
    jobs: {
      settings: config.jobs,
      http: services.http,
      secret: signingSecret,
      statusOrigin: (job) => publicUrl ?? job.origin ?? config.http.publicUrl,
      dispatch: deps.jobDispatch ?? deps.fleet?.dispatch,
      announceCancel: deps.fleet?.announceCancel,
      deliver: deps.fleet?.deliver,
    },
  })

  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw validationError(result.error, result.target === 'query' ? 'query parameter' : 'input')
    },
  })
  // Before anything else: refuse new work while draining, answer CORS; then every request is logged
  // and every tool call counted.
  if (deps.lifecycle) app.use('*', refuseWhileDraining(deps.lifecycle))
  if (config.http.corsOrigins.length > 0) app.use('*', corsFor(config.http.corsOrigins))
  app.use('*', requestContext(log, deps.metrics))
  app.use(
    '*',
    linkOrigin({
      publicUrl,
      allowedHosts: config.http.allowedHosts,
      listenHost: config.http.host,
      fallbackUrl: config.http.publicUrl,
      ...(deps.vouchedOrigin ? { vouchedOrigin: deps.vouchedOrigin } : {}),
    }),
  )
  const withKey = authenticate(authenticator, { noStore: true, oauthPublicUrl: oauth?.publicUrl, audit, log })
  app.use('/v1/*', (context, next) =>
    // Download links carry their own credential (the signed token), so a chat client can open them.
    context.req.path.startsWith('/v1/files/') ? next() : withKey(context, next),
  )
  // MCP clients authenticate exactly like REST callers: the same keys, tenants and tool scopes.
  app.use('/mcp', withKey)
  if (config.http.rateLimit) {
    const limit = config.http.rateLimit
    const limited = rateLimitMiddleware(limit, deps.fleet?.rateLimiter(limit))
    app.use('/v1/tools/*', limited)
    app.use('/mcp', limited)
  }

  if (oauth) registerResourceMetadataRoutes(app, oauth)
  const oauthServer = deps.oauthServer
  if (oauthServer) {
    app.all('/oauth/*', (context) => oauthServer.serve(context))
    // RFC 8414 puts an issuer's metadata with a path (/oauth) at /.well-known/…/oauth on the origin, and
    // OpenID Connect under the issuer: clients that look only at the first are sent to the one served.
    for (const document of ['oauth-authorization-server', 'openid-configuration']) {
      app.get(`/.well-known/${document}/oauth`, (context) => context.redirect(`/oauth/.well-known/${document}`, 307))
    }
  }
  if (deps.metrics) registerMetricsRoute(app, deps.metrics, authenticator)
  registerJobRoutes(app, caller.jobAccess)
  registerFileRoutes(app, storage, signer)
  registerToolRoutes(app, {
    caller,
    maxBodyBytes: config.calls.maxBodyBytes,
    maxFileBytes: config.calls.maxFileBytes,
    log,
  })
  registerApprovalRoutes(app, caller)
  registerSourceRoutes(app, sources, audit)
  registerOperationRoutes(app, { audit: auditLog, usage, storage })
  registerSourceManifestSchemaRoute(app)
  registerCatalogRoute(app, catalog)
  const contextDeps = {
    catalog,
    storage,
    limits: { maxFileBytes: config.calls.maxFileBytes, maxResponseChars: config.calls.maxResponseChars },
    services,
  }
  registerMcpRoute(app, {
    caller,
    catalog,
    log,
    version: serviceVersion,
    maxBodyBytes: config.calls.maxBodyBytes,
    publicUrl: config.http.publicUrl,
    context: contextDeps,
  })
  registerContextRoute(app, contextDeps)
  registerOpenApiRoute(app, { catalog, authenticator, publicUrl: config.http.publicUrl, version: serviceVersion })
  registerDocsRoutes(app, deps.docsAssets)
  registerHealthRoutes(app, storage, {
    shell: services.shell,
    shellProblem: deps.shellProblem,
    shellEnabled: catalog.builtin('execute_command') !== undefined,
    shellRequired: config.sandbox.executor === 'bwrap' || config.sandbox.executor === 'process',
    browser: services.browser,
  })
  registerFallbacks(app, catalog)
  app.onError((error, context) => handleError(error, context, log))
  return { app, caller, sources, audit: auditLog, usage }
}

/** With TOOLPORT_OAUTH_ISSUER: this resource's identifier and the issuer it trusts (the config checked both). */
function oauthResource(
  config: Config,
  server: OAuthServerMount | undefined,
): { publicUrl: string; issuer: string } | undefined {
  const publicUrl = config.http.configuredPublicUrl
  const issuer = config.oauth.issuer === 'builtin' ? server?.issuer : config.oauth.issuer
  if (config.oauth.issuer === 'builtin' && !server) {
    throw new ConfigError('TOOLPORT_OAUTH_ISSUER=builtin: this runtime does not provide the built-in server.')
  }
  return issuer && publicUrl ? { issuer, publicUrl } : undefined
}

/**
 * A tenant whose keys need approvals but that has no approver key can only let its pending calls
 * expire: the service starts (the operator may add the key later), saying so.
 */
function warnUnapprovable(config: Config, log: Logger): void {
  const tenants = new Set(
    config.apiKeys.filter((key) => requiredApprovals(key, config.approvals.policy).length > 0).map((key) => key.tenant),
  )
  for (const key of config.apiKeys) if (key.approver) tenants.delete(key.tenant)
  if (tenants.size === 0) return
  log.warn('keys need approvals but their tenant has no approver key: their pending calls can only expire', {
    tenants: [...tenants].sort(),
    hint: 'Add a keys-file entry with "approver": true for each tenant, or set TOOLPORT_APPROVAL=none.',
  })
}

function createAppSources(deps: AppDeps, builtins: readonly Tool[], services: Omit<ToolServices, 'jobs'>): SourceHost {
  const { config } = deps
  const runtime = deps.sources || {}
  const host = createSourceHost({
    storage: deps.storage,
    builtins,
    log: deps.log,
    refreshMs: deps.fleet ? Math.max(config.sources.refreshMs, fleetSourcePollMs) : config.sources.refreshMs,
    ...(deps.fleet ? { announce: (tenant: string) => deps.fleet?.announceCatalogChange(tenant) } : {}),
    upstreamRefreshMs: config.sources.upstreamRefreshMs,
    tenantKinds: config.sources.tenantKinds,
    maxTenantSources: config.sources.maxTenantSources,
    maxTenantSourceTools: config.sources.maxTenantSourceTools,
    http: services.http,
    httpAllowing: runtime.httpAllowing,
    processes: runtime.processes,
    keepWarm: runtime.keepWarm ?? true,
    environment: runtime.environment ?? {},
    tenantSecrets: (tenant) =>
      Object.assign({}, ...config.apiKeys.filter((key) => key.tenant === tenant).map((key) => key.secrets ?? {})),
  })
  deps.fleet?.onCatalogChange((tenant) => host.changedElsewhere(tenant))
  if (config.sources.compatPacks.length > 0) void host.setFeed('compat', compatFeed(config.sources.compatPacks))
  return host
}
