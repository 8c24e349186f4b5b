import { InMemoryServerEventBus, type ServerEventBus } from '@modelcontextprotocol/server'
import type { Logger } from '../../core/logger'
import { changesOf, everyRound, streamLifetimeMs, watchPollMs } from './resource-watch'
import { maxSubscriptions } from './sessions'
import type { McpAsk } from './state'
import type { Surface } from './surface'

/** A handler of one listen request, on its own event bus (what modern.ts makes). */
export interface ListenHandler {
  fetch(body: unknown): Promise<Response>
  close(): Promise<void>
}

export interface ListenDeps {
  surface: Surface
  log: Logger
  /** A 2026-07-28 handler whose listen streams hear `bus` alone. */
  handlerOn(bus: ServerEventBus): ListenHandler
}

/**
 * `subscriptions/listen` of 2026-07-28, which replaced the 2025 session's GET stream and
 * resources/subscribe: the SDK acknowledges, filters and frames the stream; toolport watches the
 * resources it names. Each listen gets its own bus: the SDK's bus matches events by URI alone, and
 * two tenants' `toolport://workspace/default/…` are the same URI. URIs this key may not read are left
 * out of what is honored (the acknowledgement says which were kept). The stream ends after
 * streamLifetimeMs with the listen's result: the client listens again.
 */
export async function answerListen(deps: ListenDeps, ask: McpAsk, body: unknown): Promise<Response> {
  const request = body as { params?: { notifications?: { resourceSubscriptions?: unknown } } }
  const asked = request.params?.notifications?.resourceSubscriptions
  const stop = new AbortController()
  const signal = AbortSignal.any([stop.signal, ask.context.req.raw.signal])
  const surfaceRequest = { principal: ask.principal, workspaceId: ask.workspaceId, signal }
  const versions: Record<string, string> = {}
  if (Array.isArray(asked)) {
    for (const uri of asked.slice(0, maxSubscriptions)) {
      if (typeof uri !== 'string' || uri in versions) continue
      try {
        versions[uri] = await deps.surface.versionOf(surfaceRequest, uri)
      } catch {
        // Not honored: the acknowledgement leaves it out, which is how the client learns.
      }
    }
  }
  const honoredBody = Array.isArray(asked)
    ? {
        ...request,
        params: {
          ...request.params,
          notifications: { ...request.params?.notifications, resourceSubscriptions: Object.keys(versions) },
        },
      }
    : body
  const bus = new InMemoryServerEventBus()
  const handler = deps.handlerOn(bus)
  const response = await handler.fetch(honoredBody)
  if (!response.body || !response.headers.get('content-type')?.includes('text/event-stream')) {
    await handler.close()
    return response
  }
  const lifetime = setTimeout(() => void handler.close(), streamLifetimeMs)
  const round = async () => {
    for (const change of await changesOf(deps.surface, surfaceRequest, versions, deps.log)) {
      versions[change.uri] = change.now
      bus.publish({ kind: 'resource_updated', uri: change.uri })
    }
    return true
  }
  if (Object.keys(versions).length > 0) {
    void everyRound(round, watchPollMs, signal).catch((error: unknown) =>
      deps.log.warn('a subscriptions/listen watch failed', { error: String(error) }),
    )
  }
  // The stream ends when the client goes or the handler closes it: the watch ends with it.
  const ended = () => {
    clearTimeout(lifetime)
    stop.abort()
    void handler.close()
  }
  const closing = new TransformStream<Uint8Array, Uint8Array>({ flush: ended })
  void response.body.pipeTo(closing.writable).catch(ended)
  return new Response(closing.readable, { status: response.status, headers: response.headers })
}
