import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import type { Principal } from '../../auth/principal'

/**
 * Requests toolport relays to an MCP client mid-call (an upstream's sampling or elicitation), by
 * JSON-RPC id. A stateless 2025 client answers one with a POST of its own, which any request handler
 * may receive: this finds the call's server again and hands it the answer. In-process: with several
 * instances, the answer must reach the instance that asked (sticky routing), or the request times out;
 * 2026-07-28 clients answer inside their retried request instead and need none of this.
 */
export interface ClientRequests {
  /** Called just before a request with this id is sent; the answer goes to deliver. */
  expect(id: number, owner: Principal, deliver: (message: JSONRPCMessage) => void): () => void
  /** Hands over answers the client posted; false when any is not one this principal is awaited for. */
  deliver(principal: Principal, body: unknown): boolean
}

/** Who may answer what a principal started: the same key of the same tenant. */
export function ownerOf(principal: Principal): string {
  return `${principal.tenant}\u0000${principal.id}`
}

export function createClientRequests(): ClientRequests {
  const pending = new Map<number, { owner: string; deliver: (message: JSONRPCMessage) => void }>()
  return {
    expect(id, owner, deliver) {
      pending.set(id, { owner: ownerOf(owner), deliver })
      return () => pending.delete(id)
    },
    deliver(principal, body) {
      const messages = Array.isArray(body) ? body : [body]
      if (messages.length === 0) return false
      const found = messages.map((message) => {
        const candidate = message as { id?: unknown; method?: unknown; result?: unknown; error?: unknown } | null
        if (!candidate || candidate.method !== undefined || typeof candidate.id !== 'number') return undefined
        if (candidate.result === undefined && candidate.error === undefined) return undefined
        const waiting = pending.get(candidate.id)
        return waiting && waiting.owner === ownerOf(principal) ? waiting : undefined
      })
      if (found.some((waiting) => waiting === undefined)) return false
      for (const [index, waiting] of found.entries()) waiting?.deliver(messages[index] as JSONRPCMessage)
      return true
    },
  }
}

/**
 * A first request id no other call's server starts from: the SDK numbers a server's requests from 0,
 * and every stateless request has its own server, so their ids would meet in ClientRequests.
 */
export function randomRequestIdBase(): number {
  const [high, low] = crypto.getRandomValues(new Uint32Array(2)) as unknown as [number, number]
  // 2^52 values below Number.MAX_SAFE_INTEGER, with room to count up.
  return (high & 0xfffff) * 2 ** 32 + low
}
