import type { Context } from 'hono'
import type { Principal } from '../auth/principal'
import type { Call } from '../caller/call'
import type { Tool } from '../tools/tool'
import type { AppEnv } from './env'

/**
 * The Call of one REST request. Its signal is the request's own AbortSignal, made only when read
 * (SSE, approvals): on Node a synchronous call hears the disconnect on the response (onDisconnect),
 * and the request's AbortController, one more per call, is never made.
 *
 * A class with the getter on its prototype, not an object literal with `get signal()`: V8 keeps an
 * accessor made per object in the old generation, from where it holds the whole request (context,
 * request and response objects, the call) through every minor GC, so each call's objects were
 * promoted and left to full GCs (--trace-gc-nvp under bench/http-overhead.ts's load: ~6,000 bytes
 * promoted per call with the literal, under 200 with this class). Spreading an instance drops
 * `signal`, which lives on the prototype: a spread passes its own, as streamCall does.
 */
export class RestCall implements Call {
  readonly #context: Context<AppEnv>
  origin: string | undefined
  declare onDisconnect?: (listener: () => void) => () => void

  constructor(
    context: Context<AppEnv>,
    readonly tool: Tool,
    readonly input: unknown,
    readonly principal: Principal,
    readonly workspaceId: string,
    onDisconnect: ((listener: () => void) => () => void) | undefined,
  ) {
    this.#context = context
    this.origin = context.get('linkOrigin')
    if (onDisconnect) this.onDisconnect = onDisconnect
  }

  get signal(): AbortSignal {
    return this.#context.req.raw.signal
  }
}
