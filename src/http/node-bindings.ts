import type { Context } from 'hono'

// What the HTTP layer uses of the Node request and response that @hono/node-server hands the app as
// `context.env` (its HttpBindings): structural types, so that this file needs no Node module and
// every other runtime (Lambda, Workers) simply finds no bindings and takes the Fetch path.

interface NodeOutgoing {
  writableFinished: boolean
  closed: boolean
  once(event: 'close', listener: () => void): unknown
  off(event: 'close', listener: () => void): unknown
}

interface NodeIncoming {
  errored: unknown
}

type Bindings = { incoming?: Partial<NodeIncoming>; outgoing?: Partial<NodeOutgoing> }

function bindings(context: Context): Bindings {
  return (context.env as Bindings | undefined) ?? {}
}

/**
 * Subscribes to the client going away, heard on the Node response itself: it closed before it was
 * all written, or the request failed (what @hono/node-server aborts the request's signal on). A
 * response already closed calls the listener at once. Undefined on other runtimes.
 */
export function nodeDisconnect(context: Context): ((listener: () => void) => () => void) | undefined {
  const { incoming, outgoing } = bindings(context)
  if (!incoming || typeof outgoing?.once !== 'function' || typeof outgoing.off !== 'function') return undefined
  const response = outgoing as NodeOutgoing
  const gone = () => Boolean(incoming.errored) || !response.writableFinished
  return (listener) => {
    if (response.closed) {
      if (gone()) listener()
      return () => {}
    }
    const onClose = () => {
      if (gone()) listener()
    }
    response.once('close', onClose)
    return () => response.off('close', onClose)
  }
}
