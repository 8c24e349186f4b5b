import type { Principal } from '../auth/principal'
import type { Tool } from '../tools/tool'

/** Per-request values that middleware hands to handlers. */
export interface AppEnv {
  Variables: {
    requestId: string
    principal: Principal
    /** The tool being called, for the access log. */
    tool: string
    /** The source that declared it (undefined for built-ins), for the access log and metrics. */
    toolSource: string | undefined
    /** The tool is a tenant's own (Tool.tenantSource): metrics count it without its names. */
    toolOfTenant: boolean
    /** The tool POST /v1/tools/{name} resolved in the caller's catalog. */
    callTool: Tool
    /** The trusted origin of links this request's response hands out (middleware/link-origin.ts). */
    linkOrigin: string
    /** The component behind a failure (storage, sandbox, …), for metrics. */
    errorOrigin: string
  }
}
