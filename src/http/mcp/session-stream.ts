import type { Principal } from '../../auth/principal'
import { isToolError } from '../../core/errors'
import type { Logger } from '../../core/logger'
import { changesOf, everyRound, keepAliveMs, streamLifetimeMs, watchPollMs } from './resource-watch'
import { type McpSessions, sessionTtlMs } from './sessions'
import type { Surface } from './surface'

export interface SessionStreamDeps {
  sessions: McpSessions
  surface: Surface
  log: Logger
}

/**
 * A 2025 session's standing GET stream: `notifications/resources/updated` for each subscribed
 * resource that changed, told once per change to the session whichever instance serves its stream
 * (sessions.ts tell). It ends when the session does, when the client goes, or after
 * streamLifetimeMs, with a retry hint: the client's SDK opens it again.
 */
export function sessionStream(
  deps: SessionStreamDeps,
  ask: { principal: Principal; workspaceId: string; sessionId: string; signal: AbortSignal },
): Response {
  const stop = new AbortController()
  const signal = AbortSignal.any([stop.signal, ask.signal, AbortSignal.timeout(streamLifetimeMs)])
  const encoder = new TextEncoder()
  const request = { principal: ask.principal, workspaceId: ask.workspaceId, signal }
  let keepAlive: ReturnType<typeof setInterval> | undefined
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const write = (text: string) => {
        if (!signal.aborted) controller.enqueue(encoder.encode(text))
      }
      // The reconnection delay the client waits after the stream ends.
      write(`retry: ${watchPollMs}\n\n`)
      keepAlive = setInterval(() => write(': keep-alive\n\n'), keepAliveMs)
      let lastTouch = Date.now()
      const round = async () => {
        const session = await deps.sessions.load(ask.principal, ask.sessionId)
        for (const change of await changesOf(deps.surface, request, session.watched, deps.log)) {
          const told = await deps.sessions.tell(ask.principal, ask.sessionId, change.uri, change.seen, change.now)
          if (!told) continue
          const message = { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: change.uri } }
          write(`event: message\ndata: ${JSON.stringify(message)}\n\n`)
        }
        // An open stream keeps its session alive; a write a few times a day, not every round.
        if (Date.now() - lastTouch > sessionTtlMs / 4) {
          await deps.sessions.touch(ask.principal, ask.sessionId)
          lastTouch = Date.now()
        }
        return true
      }
      everyRound(round, watchPollMs, signal)
        .catch((error: unknown) => {
          // The session ended (DELETE, expiry) or storage failed: the stream ends, the client reconnects
          // and hears 404 for a session that is gone.
          if (!isToolError(error)) deps.log.warn('an MCP session stream failed', { error: String(error) })
        })
        .finally(() => {
          clearInterval(keepAlive)
          stop.abort()
          try {
            controller.close()
          } catch {}
        })
    },
    cancel() {
      clearInterval(keepAlive)
      stop.abort()
    },
  })
  return new Response(body, {
    status: 200,
    headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' },
  })
}
