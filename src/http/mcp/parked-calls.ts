import type { Principal } from '../../auth/principal'
import type { McpCallAnswer } from './call'
import { ownerOf } from './client-requests'

/** What a call does next: ask its client something (2026-07-28: input_required), or finish. */
export type CallStep =
  | { kind: 'ask'; key: string; method: string; params: Record<string, unknown> }
  | { kind: 'done'; answer: McpCallAnswer }

/**
 * A tools/call that asked its client something mid-run (an MCP source's elicitation or sampling) on
 * the 2026-07-28 protocol, which has no server-to-client requests: the call keeps running here, the
 * request is answered `input_required` with this call's id as its `requestState`, and the client's
 * retry carries the answers back in. In-process: the retry must reach this instance (sticky routing),
 * as the call itself lives here.
 */
export interface ParkedCall {
  readonly id: string
  /** Who started it: only the same principal may answer it. */
  readonly owner: string
  /** The client's answer to a request this call asked under `key`; false for a key it did not ask. */
  respond(key: string, value: unknown): boolean
  /** Waits for the call's next step. */
  next(): Promise<CallStep>
  /** Asks the client (called by the call's tool, through its ClientLink). */
  ask(method: string, params: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>>
  finish(answer: McpCallAnswer): void
  /** Ends the call: the client stopped answering, or went away. */
  readonly abort: AbortController
}

export interface ParkedCalls {
  start(owner: Principal): ParkedCall
  /** Makes the call findable by its id until it finishes or the client stops answering. */
  park(call: ParkedCall): void
  /** The parked call with this id, if this principal started it. */
  find(id: string, owner: Principal): ParkedCall | undefined
}

/** How long a parked call waits for its client's retry before it is stopped. */
const answerWithinMs = 10 * 60_000

export function createParkedCalls(): ParkedCalls {
  const parked = new Map<string, { owner: string; call: ParkedCall; timer: ReturnType<typeof setTimeout> }>()

  function start(owner: Principal): ParkedCall {
    const id = crypto.randomUUID()
    const steps: CallStep[] = []
    let waiter: ((step: CallStep) => void) | undefined
    const asked = new Map<string, (value: unknown) => void>()
    let count = 0
    const abort = new AbortController()
    const push = (step: CallStep) => {
      if (waiter) {
        const wake = waiter
        waiter = undefined
        wake(step)
      } else steps.push(step)
    }
    const call: ParkedCall = {
      id,
      owner: ownerOf(owner),
      abort,
      respond(key, value) {
        const resolve = asked.get(key)
        if (!resolve) return false
        asked.delete(key)
        resolve(value)
        return true
      },
      next() {
        const ready = steps.shift()
        if (ready) return Promise.resolve(ready)
        return new Promise((resolve) => {
          waiter = resolve
        })
      },
      ask(method, params, signal) {
        count++
        const key = `input-${count}`
        return new Promise((resolve, reject) => {
          const stop = () => {
            asked.delete(key)
            reject(signal.reason ?? new Error('the call ended before its client answered'))
          }
          if (signal.aborted) return stop()
          signal.addEventListener('abort', stop, { once: true })
          asked.set(key, (value) => {
            signal.removeEventListener('abort', stop)
            resolve(value as Record<string, unknown>)
          })
          push({ kind: 'ask', key, method, params })
        })
      },
      finish(answer) {
        const entry = parked.get(id)
        if (entry) clearTimeout(entry.timer)
        parked.delete(id)
        push({ kind: 'done', answer })
      },
    }
    return call
  }

  return {
    start,
    park(call) {
      const existing = parked.get(call.id)
      if (existing) clearTimeout(existing.timer)
      const timer = setTimeout(() => {
        parked.delete(call.id)
        call.abort.abort(new Error('the client did not answer in time'))
      }, answerWithinMs)
      timer.unref?.()
      parked.set(call.id, { owner: call.owner, call, timer })
    },
    find(id, owner) {
      const entry = parked.get(id)
      return entry && entry.owner === ownerOf(owner) ? entry.call : undefined
    },
  }
}
