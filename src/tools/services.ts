import type { BrowserSessions } from '../browser/session/types'
import type { BrowserService } from '../browser/types'
import type { FileLinks } from '../downloads/links'
import type { JobAccess } from '../jobs/access'
import type { HttpClient } from '../net/http'
import type { SearchProvider } from '../net/search/search'
import type { ShellService } from '../sandbox/shell-service'
import type { TenantQuota } from '../workspace/quota'
import type { Offload } from './offload'

/** Facts about the machine for system_info; supplied by the runtime (Node, Lambda, Workers). */
export interface SystemInfo {
  os: string
  os_version: string
  arch: string
  hostname: string
  available_processors: number
  total_memory_bytes: number
  free_memory_bytes: number
  total_storage_bytes: number | null
  free_storage_bytes: number | null
  runtime: 'node' | 'lambda' | 'workers'
  runtime_version: string
}

export type SystemProbe = () => Promise<SystemInfo>

/**
 * What a deployment lends its tools besides the workspace. Each is optional: a runtime without a
 * sandbox, network client or search backend leaves it undefined, and the tool answers 503.
 */
export interface ToolServices {
  shell: ShellService | undefined
  http: HttpClient | undefined
  search: SearchProvider | undefined
  system: SystemProbe | undefined
  /** The variables TOOLPORT_ENV_ALLOW names, with their values at start; nothing else. */
  environment: Readonly<Record<string, string | undefined>>
  /** Shared headless Chromium (PDF from HTML); launched on first use. */
  browser: BrowserService | undefined
  /** The browser_* tools' sessions, held by this instance; unset where there is no browser. */
  browserSessions?: BrowserSessions | undefined
  /** Download links for generated files (signed tokens, or presigned S3 URLs). */
  links: FileLinks | undefined
  /** The app's jobs as a key may see them (get_job, cancel_job): the caller's own, which it lends the job tools. */
  jobs?: JobAccess | undefined
  /** TOOLPORT_TENANT_QUOTA_BYTES with its usage cache; owned by the app (createApp), unset: unlimited. */
  quota?: TenantQuota | undefined
  /** Worker threads for CPU-heavy tasks (Node); unset: tasks run in the calling thread. */
  offload?: Offload | undefined
}

export const noServices: ToolServices = {
  shell: undefined,
  http: undefined,
  search: undefined,
  system: undefined,
  environment: {},
  browser: undefined,
  links: undefined,
}
