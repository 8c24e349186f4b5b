import type { Principal } from '../auth/principal'

/** Per-request values that middleware hands to handlers. */
export interface AppEnv {
  Variables: {
    requestId: string
    principal: Principal
    /** The tool being called, for the access log. */
    tool: string
    /** The source that declared it (undefined for built-ins), for the access log and metrics. */
    toolSource: string | undefined
    /** The tool is a tenant's own (CatalogEntry.tenantSource): metrics count it without its names. */
    toolOfTenant: boolean
    /** The trusted origin of links this request's response hands out (middleware/link-origin.ts). */
    linkOrigin: string
    /** The component behind a failure (storage, sandbox, …), for metrics. */
    errorOrigin: string
    /** With OAuth on: where this request's resource metadata lives, for WWW-Authenticate on 401 and 403. */
    resourceMetadata: string | undefined
  }
}
