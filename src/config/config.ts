import { z } from 'zod'
import { isValidIdentifier } from '../core/paths'
import { parseRateLimit, type RateLimit } from '../http/middleware/rate-limit'
import { imageReference, isImageReference } from '../sandbox/executors/container-image'
import type { Effect } from '../tools/tool'

/**
 * Environment -> validated configuration. Runs once at start; a bad value stops the service with a
 * message naming the variable, rather than failing later on some request.
 */
export interface ApiKey {
  tenant: string
  key: string
  /** When set, the key may call only these tools. */
  tools?: string[]
  /** Calls to tools with these effects wait for POST /v1/approvals/{id} (keys file: require_approval). */
  require_approval?: Effect[]
  /** May decide its tenant's pending approvals (keys file: approver). */
  approver?: boolean
}

export interface Config {
  port: number
  host: string
  publicUrl: string
  dataDir: string
  apiKeys: ApiKey[]
  keysFile: string | undefined
  storage: 'fs' | 's3' | 'memory'
  s3: { bucket: string; endpoint?: string; region: string; forcePathStyle: boolean } | undefined
  /** Names of enabled tools, or undefined for all. */
  tools: string[] | undefined
  maxFileBytes: number
  maxBodyBytes: number
  maxResponseChars: number
  sandbox: 'auto' | 'bwrap' | 'process' | 'container' | 'none'
  shell: ShellConfig
  /** Set when TOOLPORT_SANDBOX=container. */
  container: ContainerConfig | undefined
  web: WebConfig
  operations: OperationsConfig
  jobs: JobsConfig
  links: LinkConfig
  browser: BrowserConfig
  /** Pending approvals expire after this long (TOOLPORT_APPROVAL_TTL_SECONDS). */
  approvals?: { ttlSeconds: number }
}

export interface LinkConfig {
  /** HMAC key for GET /v1/files tokens; undefined means a random one per process (links die on restart). */
  signingSecret: string | undefined
  ttlSeconds: number
  /** TOOLPORT_PUBLIC_URL when it was set; otherwise links point at the request's origin. */
  publicUrl: string | undefined
}

export interface BrowserConfig {
  /** off: no Chromium (html PDFs answer 503, markdown falls back to pdf-lib). */
  enabled: boolean
  /** A system Chromium instead of the one @sparticuz/chromium extracts. */
  chromiumPath: string | undefined
  /** Pages rendering at once; more calls wait in a queue. */
  pages: number
}

export interface JobsConfig {
  /** A synchronous call running longer turns into a job (0: never). */
  syncTimeoutSeconds: number
  ttlSeconds: number
  concurrency: number
  queue: number
  callbackAttempts: number
  callbackBackoffMs: number
}

export interface OperationsConfig {
  /** Calls per key per window (TOOLPORT_RATE_LIMIT); undefined: unlimited. */
  rateLimit: RateLimit | undefined
  /** Origins browsers may call from (TOOLPORT_CORS_ORIGINS); empty: no CORS headers at all. */
  corsOrigins: string[]
  /** How long SIGTERM waits for calls in flight. */
  shutdownGraceSeconds: number
  metrics: boolean
  /** TOOLPORT_TENANT_QUOTA_BYTES: bytes each tenant may store; undefined: unlimited. */
  tenantQuotaBytes?: number | undefined
  /** TOOLPORT_CALL_TIMEOUT_SECONDS: deadline of a call whose tool has no timeout of its own. */
  callTimeoutSeconds?: number
}

export interface WebConfig {
  /** Hosts (host or host:port) outbound fetches may reach although they are not public. */
  allowHosts: string[]
  /** Variables get_env may read, with their values taken at start. */
  env: Record<string, string | undefined>
  search:
    | { provider: 'searxng'; url: string }
    | { provider: 'brave'; apiKey: string }
    | { provider: 'duckduckgo' }
    | undefined
}

// The service's own secrets: get_env never reads them, whatever TOOLPORT_ENV_ALLOW says.
const secretVariable =
  /^(TOOLPORT_|AWS_(SECRET|SESSION|ACCESS)|.*(SECRET|TOKEN|PASSWORD|API_KEY|PRIVATE_KEY|CREDENTIAL))/i

export interface ShellConfig {
  /** Folder for workspace copies and generated sandbox files (never inside the storage folder). */
  workDir: string
  allow: string[] | undefined
  deny: string[] | undefined
  maxOutputBytes: number
  /** Parallel commands; undefined means one per CPU (decided by the runtime). */
  concurrency: number | undefined
  queue: number | undefined
  memoryBytes: number
  pids: number
  fileBytes: number
  openFiles: number
  workspaceBytes: number
  workspaceEntries: number
  /** Host uid/gid the sandbox runs as when the service runs as root. */
  uid: number
  gid: number
}

export interface ContainerConfig {
  engine: 'podman' | 'docker'
  /** Image every command runs in unless a call picks another from `images`. */
  image: string
  /** Images a call may pick with execute_command's `image` (the default image is always allowed). */
  images: string[]
  cpus: number
  /** Engine network mode; 'none' unless the operator opens it. */
  network: string
}

export class ConfigError extends Error {
  override name = 'ConfigError'
}

const boolean = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes')

const positiveInteger = z.coerce.number().int().positive()

const environmentSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8787),
  HOST: z.string().min(1).default('127.0.0.1'),
  TOOLPORT_PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  TOOLPORT_DATA_DIR: z.string().min(1).default('./.toolport-data'),
  TOOLPORT_API_KEYS: z.string().optional(),
  TOOLPORT_KEYS_FILE: z.string().min(1).optional(),
  TOOLPORT_STORAGE: z.enum(['fs', 's3', 'memory']).default('fs'),
  TOOLPORT_S3_BUCKET: z.string().min(3).max(63).optional(),
  TOOLPORT_S3_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  TOOLPORT_S3_REGION: z.string().min(1).optional(),
  TOOLPORT_S3_FORCE_PATH_STYLE: boolean.default(false),
  TOOLPORT_TOOLS: z.string().optional(),
  TOOLPORT_MAX_FILE_BYTES: positiveInteger.default(10 * 1024 * 1024),
  TOOLPORT_MAX_BODY_BYTES: positiveInteger.optional(),
  TOOLPORT_SANDBOX: z.enum(['auto', 'bwrap', 'process', 'container', 'none']).default('auto'),
  TOOLPORT_CONTAINER_ENGINE: z.enum(['podman', 'docker']).default('podman'),
  TOOLPORT_CONTAINER_IMAGE: z
    .string()
    .max(255)
    .regex(imageReference, 'must be an image reference such as python:3.12')
    .optional(),
  TOOLPORT_CONTAINER_IMAGES: z.string().optional(),
  TOOLPORT_CONTAINER_CPUS: z.coerce.number().positive().max(1024).default(1),
  TOOLPORT_CONTAINER_NETWORK: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_.-]{0,62}$/i, 'must be an engine network name such as none or bridge')
    .default('none'),
  TOOLPORT_WORK_DIR: z.string().min(1).default('./.toolport-work'),
  TOOLPORT_SHELL_ALLOW: z.string().optional(),
  TOOLPORT_SHELL_DENY: z.string().optional(),
  TOOLPORT_SHELL_MAX_OUTPUT_BYTES: positiveInteger.max(16 * 1024 * 1024).default(64 * 1024),
  TOOLPORT_SHELL_CONCURRENCY: positiveInteger.max(1024).optional(),
  TOOLPORT_SHELL_QUEUE: z.coerce.number().int().min(0).max(100_000).optional(),
  TOOLPORT_SHELL_MEMORY_BYTES: positiveInteger.min(16 * 1024 * 1024).default(512 * 1024 * 1024),
  TOOLPORT_SHELL_PIDS: positiveInteger.min(8).default(256),
  TOOLPORT_SHELL_FILE_BYTES: positiveInteger.default(1024 * 1024 * 1024),
  TOOLPORT_SHELL_OPEN_FILES: positiveInteger.min(16).default(1024),
  TOOLPORT_SHELL_WORKSPACE_BYTES: positiveInteger.default(2 * 1024 * 1024 * 1024),
  TOOLPORT_SHELL_WORKSPACE_ENTRIES: positiveInteger.default(100_000),
  TOOLPORT_SANDBOX_UID: z.coerce.number().int().min(1).max(4_294_967_294).default(65534),
  TOOLPORT_SANDBOX_GID: z.coerce.number().int().min(1).max(4_294_967_294).default(65534),
  TOOLPORT_FETCH_ALLOW_HOSTS: z.string().optional(),
  TOOLPORT_RATE_LIMIT: z
    .string()
    .refine((value) => parseRateLimit(value) !== undefined, 'use COUNT/UNIT with UNIT s, min or hour, e.g. 60/min')
    .optional(),
  TOOLPORT_CORS_ORIGINS: z.string().optional(),
  TOOLPORT_SHUTDOWN_GRACE_SECONDS: z.coerce.number().int().min(0).max(3600).default(25),
  TOOLPORT_METRICS: boolean.default(true),
  TOOLPORT_TENANT_QUOTA_BYTES: positiveInteger.optional(),
  TOOLPORT_CALL_TIMEOUT_SECONDS: positiveInteger.max(86_400).default(300),
  TOOLPORT_SYNC_TIMEOUT_SECONDS: z.coerce.number().min(0).max(3600).default(40),
  TOOLPORT_JOB_TTL_SECONDS: positiveInteger.min(60).default(86_400),
  TOOLPORT_JOB_CONCURRENCY: positiveInteger.max(256).default(4),
  TOOLPORT_JOB_QUEUE: z.coerce.number().int().min(0).max(100_000).default(100),
  TOOLPORT_CALLBACK_ATTEMPTS: positiveInteger.max(10).default(4),
  TOOLPORT_CALLBACK_BACKOFF_MS: positiveInteger.max(600_000).default(2_000),
  TOOLPORT_ENV_ALLOW: z.string().optional(),
  TOOLPORT_SEARCH_PROVIDER: z.enum(['searxng', 'brave', 'duckduckgo']).optional(),
  TOOLPORT_SEARXNG_URL: z.url({ protocol: /^https?$/ }).optional(),
  TOOLPORT_BRAVE_API_KEY: z.string().min(8).optional(),
  TOOLPORT_SIGNING_SECRET: z.string().min(32, 'use at least 32 characters (e.g. openssl rand -hex 32)').optional(),
  // Presigned S3 URLs may live at most 7 days.
  TOOLPORT_LINK_TTL_SECONDS: positiveInteger.min(60).max(604_800).default(3600),
  TOOLPORT_BROWSER: z.enum(['auto', 'off']).default('auto'),
  TOOLPORT_CHROMIUM_PATH: z.string().min(1).optional(),
  TOOLPORT_BROWSER_PAGES: positiveInteger.max(32).default(2),
  TOOLPORT_APPROVAL_TTL_SECONDS: positiveInteger.max(604_800).default(3600),
})

function searchConfig(values: z.output<typeof environmentSchema>): WebConfig['search'] {
  const provider =
    values.TOOLPORT_SEARCH_PROVIDER ??
    (values.TOOLPORT_SEARXNG_URL ? 'searxng' : values.TOOLPORT_BRAVE_API_KEY ? 'brave' : undefined)
  switch (provider) {
    case 'searxng':
      if (!values.TOOLPORT_SEARXNG_URL)
        throw new ConfigError('TOOLPORT_SEARXNG_URL is required when TOOLPORT_SEARCH_PROVIDER=searxng')
      return { provider, url: values.TOOLPORT_SEARXNG_URL.replace(/\/+$/, '') }
    case 'brave':
      if (!values.TOOLPORT_BRAVE_API_KEY)
        throw new ConfigError('TOOLPORT_BRAVE_API_KEY is required when TOOLPORT_SEARCH_PROVIDER=brave')
      return { provider, apiKey: values.TOOLPORT_BRAVE_API_KEY }
    case 'duckduckgo':
      return { provider }
    default:
      return undefined
  }
}

function corsOrigins(value: string | undefined): string[] {
  const origins = (value ?? '')
    .split(',')
    .map((origin) => origin.trim().replace(/\/+$/, ''))
    .filter((origin) => origin !== '')
  const bad = origins.filter((origin) => origin !== '*' && !/^https?:\/\/[^/\s]+$/.test(origin))
  if (bad.length > 0)
    throw new ConfigError(`TOOLPORT_CORS_ORIGINS: not an origin: ${bad.join(', ')} (use e.g. https://app.example.com)`)
  return origins
}

function allowedEnvironment(list: string | undefined, env: Record<string, string | undefined>): WebConfig['env'] {
  const names = (list ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '')
  const bad = names.filter((name) => !/^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(name))
  if (bad.length > 0) throw new ConfigError(`TOOLPORT_ENV_ALLOW: not a variable name: ${bad.join(', ')}`)
  const secret = names.filter((name) => secretVariable.test(name))
  if (secret.length > 0) {
    throw new ConfigError(
      `TOOLPORT_ENV_ALLOW: ${secret.join(', ')} look like secrets of the service and are never exposed`,
    )
  }
  return Object.fromEntries(names.map((name) => [name, env[name]]))
}

const programName = /^[A-Za-z0-9._+-]{1,128}$/

function containerConfig(values: z.output<typeof environmentSchema>): ContainerConfig | undefined {
  if (values.TOOLPORT_SANDBOX !== 'container') return undefined
  const image = values.TOOLPORT_CONTAINER_IMAGE
  if (!image) {
    throw new ConfigError(
      'TOOLPORT_SANDBOX=container needs TOOLPORT_CONTAINER_IMAGE: the image commands run in (built or pulled beforehand).',
    )
  }
  const images = (values.TOOLPORT_CONTAINER_IMAGES ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
  const invalid = images.filter((entry) => !isImageReference(entry))
  if (invalid.length > 0)
    throw new ConfigError(`TOOLPORT_CONTAINER_IMAGES: not an image reference: ${invalid.join(', ')}`)
  return {
    engine: values.TOOLPORT_CONTAINER_ENGINE,
    image,
    images: [...new Set([image, ...images])],
    cpus: values.TOOLPORT_CONTAINER_CPUS,
    network: values.TOOLPORT_CONTAINER_NETWORK,
  }
}

function programList(value: string | undefined, variable: string): string[] | undefined {
  if (value === undefined) return undefined
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '')
  const bad = names.filter((name) => !programName.test(name))
  if (bad.length > 0)
    throw new ConfigError(`${variable}: not a program name: ${bad.join(', ')} (use names like git, python3)`)
  return names
}

const keyEntrySchema = z
  .object({
    tenant: z.string().refine(isValidIdentifier, 'tenant must match [A-Za-z0-9._-]{1,64}'),
    key: z.string().min(16, 'keys must have at least 16 characters'),
    tools: z.array(z.string()).min(1).optional(),
    require_approval: z
      .array(z.enum(['read', 'write', 'external', 'destructive'] satisfies Effect[]))
      .optional()
      .describe('Effects whose calls need approval, e.g. ["destructive", "write"].'),
    approver: z.boolean().optional().describe("May decide its tenant's pending approvals (POST /v1/approvals/{id})."),
  })
  .refine((entry) => !(entry.approver && entry.require_approval?.length), {
    message: 'a key cannot both need approval and give it (it could approve its own calls); use two keys',
    path: ['approver'],
  })

export const keysFileSchema = z.array(keyEntrySchema)

function describe(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || '(value)'}: ${issue.message}`).join('; ')
}

export function parseApiKeys(value: string): ApiKey[] {
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => {
      const separator = entry.indexOf('=')
      const candidate =
        separator === -1
          ? { tenant: 'default', key: entry }
          : {
              tenant: entry.slice(0, separator).trim(),
              key: entry.slice(separator + 1).trim(),
            }
      const parsed = keyEntrySchema.safeParse(candidate)
      if (!parsed.success) throw new ConfigError(`TOOLPORT_API_KEYS: ${describe(parsed.error)}`)
      return parsed.data
    })
}

/** Parses the JSON text of TOOLPORT_KEYS_FILE: a list of { tenant, key, tools?, require_approval? }. */
export function parseKeysFile(text: string, source = 'TOOLPORT_KEYS_FILE'): ApiKey[] {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new ConfigError(`${source}: not valid JSON (${(error as Error).message})`)
  }
  const parsed = keysFileSchema.safeParse(json)
  if (!parsed.success) throw new ConfigError(`${source}: ${describe(parsed.error)}`)
  return parsed.data
}

export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase()
  return bare === 'localhost' || bare === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare)
}

export interface LoadConfigOptions {
  /** Known tool names; TOOLPORT_TOOLS and keys' tool lists must name only these. */
  toolNames: readonly string[]
  /** Keys read from TOOLPORT_KEYS_FILE by the runtime (reading files is runtime-specific). */
  fileKeys?: ApiKey[]
}

export function loadConfig(env: Record<string, string | undefined>, options: LoadConfigOptions): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''))
  const parsed = environmentSchema.safeParse(present)
  if (!parsed.success) throw new ConfigError(`Invalid configuration: ${describe(parsed.error)}`)
  const values = parsed.data

  const known = new Set(options.toolNames)
  const checkToolNames = (names: string[], source: string) => {
    const unknown = names.filter((name) => !known.has(name))
    if (unknown.length > 0) {
      throw new ConfigError(`${source}: unknown tool ${unknown.join(', ')}; known tools: ${[...known].join(', ')}`)
    }
  }

  const tools = values.TOOLPORT_TOOLS?.split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '')
  if (tools) {
    if (tools.length === 0) throw new ConfigError('TOOLPORT_TOOLS: names no tool')
    checkToolNames(tools, 'TOOLPORT_TOOLS')
  }

  const apiKeys = [
    ...(values.TOOLPORT_API_KEYS ? parseApiKeys(values.TOOLPORT_API_KEYS) : []),
    ...(options.fileKeys ?? []),
  ]
  for (const apiKey of apiKeys) if (apiKey.tools) checkToolNames(apiKey.tools, `key of tenant ${apiKey.tenant}`)
  if (new Set(apiKeys.map((apiKey) => apiKey.key)).size !== apiKeys.length) {
    throw new ConfigError('TOOLPORT_API_KEYS / TOOLPORT_KEYS_FILE: the same key is listed twice')
  }

  if (apiKeys.length === 0 && !isLoopbackHost(values.HOST)) {
    throw new ConfigError(
      `HOST=${values.HOST}: without API keys toolport listens only on loopback (127.0.0.1, ::1, localhost). Set TOOLPORT_API_KEYS or TOOLPORT_KEYS_FILE to serve other addresses.`,
    )
  }

  let s3: Config['s3']
  if (values.TOOLPORT_STORAGE === 's3') {
    if (!values.TOOLPORT_S3_BUCKET) throw new ConfigError('TOOLPORT_S3_BUCKET is required when TOOLPORT_STORAGE=s3')
    s3 = {
      bucket: values.TOOLPORT_S3_BUCKET,
      region: values.TOOLPORT_S3_REGION ?? env.AWS_REGION ?? 'us-east-1',
      forcePathStyle: values.TOOLPORT_S3_FORCE_PATH_STYLE,
      ...(values.TOOLPORT_S3_ENDPOINT ? { endpoint: values.TOOLPORT_S3_ENDPOINT } : {}),
    }
  }

  const hostForUrl = values.HOST.includes(':') && !values.HOST.startsWith('[') ? `[${values.HOST}]` : values.HOST
  const maxFileBytes = values.TOOLPORT_MAX_FILE_BYTES
  return {
    port: values.PORT,
    host: values.HOST,
    publicUrl: (values.TOOLPORT_PUBLIC_URL ?? `http://${hostForUrl}:${values.PORT}`).replace(/\/+$/, ''),
    dataDir: values.TOOLPORT_DATA_DIR,
    apiKeys,
    keysFile: values.TOOLPORT_KEYS_FILE,
    storage: values.TOOLPORT_STORAGE,
    s3,
    tools,
    maxFileBytes,
    // JSON escaping can grow a file's text up to six times; leave room for the largest file to arrive.
    maxBodyBytes: values.TOOLPORT_MAX_BODY_BYTES ?? Math.max(maxFileBytes * 2 + 1024 * 1024, 1024 * 1024),
    maxResponseChars: 100_000,
    sandbox: values.TOOLPORT_SANDBOX,
    shell: {
      workDir: values.TOOLPORT_WORK_DIR,
      allow: programList(values.TOOLPORT_SHELL_ALLOW, 'TOOLPORT_SHELL_ALLOW'),
      deny: programList(values.TOOLPORT_SHELL_DENY, 'TOOLPORT_SHELL_DENY'),
      maxOutputBytes: values.TOOLPORT_SHELL_MAX_OUTPUT_BYTES,
      concurrency: values.TOOLPORT_SHELL_CONCURRENCY,
      queue: values.TOOLPORT_SHELL_QUEUE,
      memoryBytes: values.TOOLPORT_SHELL_MEMORY_BYTES,
      pids: values.TOOLPORT_SHELL_PIDS,
      fileBytes: values.TOOLPORT_SHELL_FILE_BYTES,
      openFiles: values.TOOLPORT_SHELL_OPEN_FILES,
      workspaceBytes: values.TOOLPORT_SHELL_WORKSPACE_BYTES,
      workspaceEntries: values.TOOLPORT_SHELL_WORKSPACE_ENTRIES,
      uid: values.TOOLPORT_SANDBOX_UID,
      gid: values.TOOLPORT_SANDBOX_GID,
    },
    container: containerConfig(values),
    jobs: {
      syncTimeoutSeconds: values.TOOLPORT_SYNC_TIMEOUT_SECONDS,
      ttlSeconds: values.TOOLPORT_JOB_TTL_SECONDS,
      concurrency: values.TOOLPORT_JOB_CONCURRENCY,
      queue: values.TOOLPORT_JOB_QUEUE,
      callbackAttempts: values.TOOLPORT_CALLBACK_ATTEMPTS,
      callbackBackoffMs: values.TOOLPORT_CALLBACK_BACKOFF_MS,
    },
    operations: {
      rateLimit: values.TOOLPORT_RATE_LIMIT ? parseRateLimit(values.TOOLPORT_RATE_LIMIT) : undefined,
      corsOrigins: corsOrigins(values.TOOLPORT_CORS_ORIGINS),
      shutdownGraceSeconds: values.TOOLPORT_SHUTDOWN_GRACE_SECONDS,
      metrics: values.TOOLPORT_METRICS,
      tenantQuotaBytes: values.TOOLPORT_TENANT_QUOTA_BYTES,
      callTimeoutSeconds: values.TOOLPORT_CALL_TIMEOUT_SECONDS,
    },
    web: {
      allowHosts: (values.TOOLPORT_FETCH_ALLOW_HOSTS ?? '')
        .split(',')
        .map((host) => host.trim())
        .filter((host) => host !== ''),
      env: allowedEnvironment(values.TOOLPORT_ENV_ALLOW, env),
      search: searchConfig(values),
    },
    links: {
      signingSecret: values.TOOLPORT_SIGNING_SECRET,
      ttlSeconds: values.TOOLPORT_LINK_TTL_SECONDS,
      publicUrl: values.TOOLPORT_PUBLIC_URL?.replace(/\/+$/, ''),
    },
    browser: {
      enabled: values.TOOLPORT_BROWSER === 'auto',
      chromiumPath: values.TOOLPORT_CHROMIUM_PATH,
      pages: values.TOOLPORT_BROWSER_PAGES,
    },
    approvals: { ttlSeconds: values.TOOLPORT_APPROVAL_TTL_SECONDS },
  }
}
