import { approvalSettings } from '../approvals/settings'
import { auditSettings } from '../audit/settings'
import type { ApiKey } from '../auth/keys'
import { type OAuthServerSettings, oauthServerSettings } from '../auth/oauth/server-settings'
import { oauthSettings } from '../auth/oauth/settings'
import { authSettings } from '../auth/settings'
import { browserSessionSettings } from '../browser/session/settings'
import { browserSettings } from '../browser/settings'
import { callSettings } from '../caller/settings'
import { egressBeyond } from '../core/egress-policy'
import { isLoopbackHost } from '../core/loopback'
import {
  ConfigError,
  type Environment,
  loadSettings,
  type Runtime,
  type SettingsDeclaration,
  type SliceOf,
} from '../core/settings'
import { downloadSettings } from '../downloads/settings'
import { httpSettings } from '../http/settings'
import { jobSettings } from '../jobs/settings'
import { searchSettings } from '../net/search/settings'
import { netSettings } from '../net/settings'
import { type EgressSettings, egressSettings } from '../sandbox/egress/settings'
import { type SandboxSettings, sandboxSettings } from '../sandbox/settings'
import { sourceSettings } from '../sources/settings'
import { storageSettings } from '../storage/settings'
import { environmentSettings } from '../tools/system/settings'
import { workspaceSettings } from '../workspace/settings'
import { fleetSettings } from './fleet-settings'
import { processSettings } from './process-settings'

/**
 * Every module's settings, in the order docs/configuration.md shows them. Each module declares and
 * documents its own variables (its settings.ts) and receives only its slice of the config.
 */
export const settingsDeclarations = {
  http: httpSettings,
  process: processSettings,
  auth: authSettings,
  oauth: oauthSettings,
  oauthServer: oauthServerSettings,
  sources: sourceSettings,
  calls: callSettings,
  storage: storageSettings,
  workspace: workspaceSettings,
  downloads: downloadSettings,
  sandbox: sandboxSettings,
  egress: egressSettings,
  net: netSettings,
  search: searchSettings,
  environment: environmentSettings,
  browser: browserSettings,
  browserSessions: browserSessionSettings,
  jobs: jobSettings,
  fleet: fleetSettings,
  approvals: approvalSettings,
  audit: auditSettings,
} as const

type Declarations = typeof settingsDeclarations

export type Config = { [K in keyof Declarations]: SliceOf<Declarations[K]> } & {
  runtime: Runtime
  /** Every key: TOOLPORT_API_KEYS's and those the runtime read from a keys file or secret. */
  apiKeys: ApiKey[]
}

export interface LoadConfigOptions {
  /** Known tool names; TOOLPORT_TOOLS and keys' tool lists must name only these. */
  toolNames: readonly string[]
  /** Keys read from TOOLPORT_KEYS_FILE or TOOLPORT_API_KEYS_SECRET by the runtime (reading is runtime-specific). */
  fileKeys?: ApiKey[]
  /** Which runtime's defaults apply (default node). */
  runtime?: Runtime
  /** Where notes about ignored settings go (a setting fixed on this runtime). */
  warn?: (message: string) => void
}

/**
 * Environment -> validated configuration. Runs once at start; a bad value stops the service with a
 * message naming the variable, rather than failing later on some request.
 */
export function loadConfig(env: Environment, options: LoadConfigOptions): Config {
  const runtime = options.runtime ?? 'node'
  const slices = Object.fromEntries(
    Object.entries(settingsDeclarations).map(([name, declaration]) => [
      name,
      loadSettings(declaration as SettingsDeclaration, env, runtime, options.warn),
    ]),
  ) as unknown as { [K in keyof Declarations]: SliceOf<Declarations[K]> }
  const apiKeys = [...slices.auth.apiKeys, ...(options.fileKeys ?? [])]
  checkToolNames(slices.sources.enabled, apiKeys, options.toolNames)
  checkEgress(slices.egress, slices.sandbox, apiKeys)
  if (new Set(apiKeys.map((apiKey) => apiKey.key)).size !== apiKeys.length) {
    throw new ConfigError('TOOLPORT_API_KEYS / TOOLPORT_KEYS_FILE: the same key is listed twice')
  }
  if (slices.oauth.issuer && !slices.http.configuredPublicUrl) {
    throw new ConfigError(
      'TOOLPORT_OAUTH_ISSUER needs TOOLPORT_PUBLIC_URL: it is the resource identifier access tokens must be issued for (their aud), and where clients find the resource metadata.',
    )
  }
  if (slices.oauth.issuer === 'builtin' && runtime === 'workers') {
    throw new ConfigError(
      'TOOLPORT_OAUTH_ISSUER=builtin runs on Node and Lambda (this is workers): point it at an external issuer instead (docs/auth.md).',
    )
  }
  checkOAuthServer(slices.oauthServer, slices.oauth.issuer)
  if (slices.oauth.issuer === 'builtin' && apiKeys.length === 0 && !slices.oauthServer.upstream) {
    throw new ConfigError(
      'TOOLPORT_OAUTH_ISSUER=builtin needs API keys or TOOLPORT_OAUTH_UPSTREAM_ISSUER: people sign in with their toolport key or through that provider.',
    )
  }
  if (apiKeys.length === 0 && !slices.oauth.issuer && !isLoopbackHost(slices.http.host)) {
    throw new ConfigError(
      `HOST=${slices.http.host}: without API keys toolport listens only on loopback (127.0.0.1, ::1, localhost). Set TOOLPORT_API_KEYS or TOOLPORT_KEYS_FILE (or TOOLPORT_OAUTH_ISSUER) to serve other addresses.`,
    )
  }
  return { ...slices, runtime, apiKeys }
}

/** The built-in server's settings only mean something with it, and an upstream provider needs its whole set. */
function checkOAuthServer(server: OAuthServerSettings, issuer: string | undefined): void {
  const builtinOnly =
    server.clients.length > 0
      ? 'TOOLPORT_OAUTH_CLIENTS'
      : server.upstream
        ? 'TOOLPORT_OAUTH_UPSTREAM_ISSUER'
        : undefined
  if (builtinOnly && issuer !== 'builtin') {
    throw new ConfigError(
      `${builtinOnly} configures the built-in authorization server: it needs TOOLPORT_OAUTH_ISSUER=builtin.`,
    )
  }
  const ids = server.clients.map((client) => client.client_id)
  if (new Set(ids).size !== ids.length)
    throw new ConfigError('TOOLPORT_OAUTH_CLIENTS: the same client_id is listed twice')
  const upstream = server.upstream
  if (!upstream) return
  if (!upstream.clientId || !upstream.clientSecret) {
    throw new ConfigError(
      'TOOLPORT_OAUTH_UPSTREAM_ISSUER needs TOOLPORT_OAUTH_UPSTREAM_CLIENT_ID and TOOLPORT_OAUTH_UPSTREAM_CLIENT_SECRET: register toolport at the provider with the redirect URI TOOLPORT_PUBLIC_URL/oauth/upstream/callback.',
    )
  }
  if (!upstream.tenant && !upstream.tenantClaim) {
    throw new ConfigError(
      'TOOLPORT_OAUTH_UPSTREAM_ISSUER needs TOOLPORT_OAUTH_UPSTREAM_TENANT or TOOLPORT_OAUTH_UPSTREAM_TENANT_CLAIM: the tenant of the people who sign in there.',
    )
  }
}

/** A key may only narrow the server's egress, and the proxy must be the containers' only way out. */
function checkEgress(egress: EgressSettings, sandbox: SandboxSettings, apiKeys: readonly ApiKey[]): void {
  for (const apiKey of apiKeys) {
    const beyond = apiKey.egress ? egressBeyond(egress.policy, apiKey.egress) : undefined
    if (beyond) {
      throw new ConfigError(
        `key of tenant ${apiKey.tenant}: egress ${beyond} is beyond TOOLPORT_SHELL_EGRESS=${egress.policy.mode}${egress.policy.mode === 'allow' ? ' and its TOOLPORT_SHELL_EGRESS_ALLOW' : ''}; a key may only narrow the server's policy`,
      )
    }
  }
  if (egress.policy.mode !== 'none' && sandbox.executor === 'process') {
    throw new ConfigError(
      `TOOLPORT_SHELL_EGRESS=${egress.policy.mode} cannot be enforced with TOOLPORT_SANDBOX=process: its commands have the host's network (docs/sandbox.md).`,
    )
  }
  if (egress.policy.mode !== 'none' && sandbox.container && sandbox.container.network !== 'none') {
    throw new ConfigError(
      `TOOLPORT_SHELL_EGRESS=${egress.policy.mode} needs TOOLPORT_CONTAINER_NETWORK=none: with a network of their own, containers would not need the egress proxy to get out.`,
    )
  }
}
// A key's scope may also name source tools by id (tickets:create) or whole sources (tickets:*).
const sourceScope = /^[a-z][a-z0-9-]{0,31}:(\*|[^\s:]{1,128})$/

function checkToolNames(enabled: string[] | undefined, apiKeys: readonly ApiKey[], toolNames: readonly string[]): void {
  const known = new Set(toolNames)
  const check = (names: string[], source: string, scopes = false) => {
    const unknown = names.filter((name) => {
      if (known.has(name)) return false
      if (!scopes) return true
      if (name.startsWith('builtin:')) return !known.has(name.slice('builtin:'.length))
      return !sourceScope.test(name)
    })
    if (unknown.length > 0) {
      const more = scopes ? ', source tools as source:tool or source:*' : ''
      throw new ConfigError(
        `${source}: unknown tool ${unknown.join(', ')}; known tools: ${[...known].join(', ')}${more}`,
      )
    }
  }
  if (enabled) {
    if (enabled.length === 0) throw new ConfigError('TOOLPORT_TOOLS: names no tool')
    check(enabled, 'TOOLPORT_TOOLS')
  }
  for (const apiKey of apiKeys) if (apiKey.tools) check(apiKey.tools, `key of tenant ${apiKey.tenant}`, true)
}
