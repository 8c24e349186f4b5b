import { getEventListeners } from 'node:events'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { Principal } from '../auth/principal'
import { silentLogger } from '../core/logger'
import { createMemoryStorage } from '../storage/memory'
import { noServices } from '../tools/services'
import { defineTool } from '../tools/tool'
import { invokeTool } from './invoke'

// A tool that reports how its signal ended, and never finishes on its own.
function signalWatcher(seen: unknown[]) {
  return defineTool({
    name: 'watch_signal',
    title: 'Watch signal',
    description: 'Waits for its abort signal and records the reason.',
    effect: 'read',
    input: z.object({}),
    output: z.object({}),
    run: (_input, { signal }) =>
      new Promise((_, reject) => {
        const record = () => {
          seen.push(signal.reason)
          reject(signal.reason)
        }
        if (signal.aborted) record()
        else signal.addEventListener('abort', record, { once: true })
      }),
  })
}

const principal: Principal = {
  id: 'key-1',
  tenant: 'default',
  tools: undefined,
  egress: undefined,
  requireApproval: new Set(),
  approver: false,
}

function invocation(seen: unknown[], abort: AbortSignal | AbortController, callTimeoutMs?: number) {
  return {
    tool: signalWatcher(seen),
    input: {},
    principal,
    workspaceId: 'default',
    storage: createMemoryStorage(),
    limits: { maxFileBytes: 1000, maxResponseChars: 1000, ...(callTimeoutMs ? { callTimeoutMs } : {}) },
    abort,
    log: silentLogger,
    services: noServices,
  }
}

describe('invokeTool signals', () => {
  it('at the deadline: the tool sees a TimeoutError and the caller gets timeout; no listener is left', async () => {
    const seen: unknown[] = []
    const outer = new AbortController()
    await expect(invokeTool(invocation(seen, outer.signal, 50))).rejects.toMatchObject({ code: 'timeout' })
    expect(seen).toHaveLength(1)
    expect(seen[0]).toMatchObject({ name: 'TimeoutError' })
    expect(getEventListeners(outer.signal, 'abort')).toHaveLength(0)
  })

  it('when the caller goes away: the tool sees the caller’s reason, before any deadline', async () => {
    const seen: unknown[] = []
    const outer = new AbortController()
    const reason = new Error('client disconnected')
    const call = invokeTool(invocation(seen, outer.signal, 60_000))
    setTimeout(() => outer.abort(reason), 10)
    await expect(call).rejects.toBe(reason)
    expect(seen).toEqual([reason])
    expect(getEventListeners(outer.signal, 'abort')).toHaveLength(0)
  })

  it('a caller already gone: the tool starts with an aborted signal', async () => {
    const seen: unknown[] = []
    const reason = new Error('gone before the call')
    await expect(invokeTool(invocation(seen, AbortSignal.abort(reason), 60_000))).rejects.toBe(reason)
    expect(seen).toEqual([reason])
  })

  it('with the call’s own controller: the deadline aborts that controller, and the tool holds its signal', async () => {
    const seen: unknown[] = []
    const own = new AbortController()
    await expect(invokeTool(invocation(seen, own, 50))).rejects.toMatchObject({ code: 'timeout' })
    expect(own.signal.aborted).toBe(true)
    expect(seen).toEqual([own.signal.reason])
    expect(own.signal.reason).toMatchObject({ name: 'TimeoutError' })
    // A disconnect aborting the controller reaches the tool the same way, before the deadline.
    const gone = new AbortController()
    const call = invokeTool(invocation(seen, gone, 60_000))
    setTimeout(() => gone.abort(new Error('client disconnected')), 10)
    await expect(call).rejects.toThrow('client disconnected')
  })

  it('without a deadline the tool gets the caller’s own signal', async () => {
    const seen: unknown[] = []
    const outer = new AbortController()
    const call = invokeTool(invocation(seen, outer.signal))
    outer.abort(new Error('stop'))
    await expect(call).rejects.toThrow('stop')
    expect(seen).toHaveLength(1)
  })
})

describe('invokeTool context', () => {
  it('keeps the lazy signal on a prototype, not as an accessor of each context, with and without a deadline', async () => {
    // An accessor made per object is kept by V8 in the old generation and holds the call's whole
    // context through every minor GC (see LazySignal): every context's own properties are plain data.
    const seen: { ownAccessors: string[]; workspace: boolean; controllerSignal: boolean }[] = []
    const own = new AbortController()
    const tool = defineTool({
      name: 'look_at_context',
      title: 'Look at context',
      description: 'Reports the shape of its context.',
      effect: 'read',
      input: z.object({}),
      output: z.object({}),
      run: async (_input, context) => {
        const descriptors = Object.getOwnPropertyDescriptors(context)
        seen.push({
          ownAccessors: Object.keys(descriptors).filter((name) => descriptors[name]?.get !== undefined),
          workspace: typeof context.workspace.readFile === 'function',
          controllerSignal: context.signal === own.signal && !context.signal.aborted,
        })
        return {}
      },
    })
    const base = invocation([], own, 60_000)
    await invokeTool({ ...base, tool })
    await invokeTool({ ...base, tool, limits: { maxFileBytes: 1000, maxResponseChars: 1000 } })
    expect(seen).toEqual([
      { ownAccessors: [], workspace: true, controllerSignal: true },
      { ownAccessors: [], workspace: true, controllerSignal: true },
    ])
  })
})
