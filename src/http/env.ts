import type { Principal } from '../auth/principal'

/** Per-request values that middleware hands to handlers. */
export interface AppEnv {
  Variables: {
    requestId: string
    principal: Principal
    /** The tool being called, for the access log. */
    tool: string
    /** The trusted origin of links this request's response hands out (middleware/link-origin.ts). */
    linkOrigin: string
    /** The component behind a failure (storage, sandbox, …), for metrics. */
    errorOrigin: string
  }
}
