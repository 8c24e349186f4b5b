import { getEventListeners } from 'node:events'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createApprovalStore } from '../approvals/store'
import type { Principal } from '../auth/principal'
import { createCatalog } from '../catalog/catalog'
import { silentLogger } from '../core/logger'
import { createMemoryStorage } from '../storage/memory'
import { noServices, type ToolServices } from '../tools/services'
import { defineTool, type Tool } from '../tools/tool'
import { type AdmittedCall, disconnectOf } from './call'
import { createCaller } from './caller'

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

/** A caller over memory storage serving these tools, with a call deadline of `callTimeoutMs`. */
function callerOf(tools: Tool[], callTimeoutMs = 60_000, services: Partial<ToolServices> = {}) {
  const storage = createMemoryStorage()
  return createCaller({
    catalog: createCatalog(tools),
    storage,
    settings: {
      maxFileBytes: 1000,
      maxBodyBytes: 10_000,
      maxResponseChars: 1000,
      callTimeoutSeconds: callTimeoutMs / 1000,
      syncTimeoutSeconds: 0,
    },
    services: { ...noServices, ...services },
    log: silentLogger,
    approvals: { store: createApprovalStore(storage), ttlSeconds: 60, publicUrl: undefined },
    jobs: {
      settings: { concurrency: 2, queue: 10, perTenant: 0, ttlSeconds: 60, callbackAttempts: 1, callbackBackoffMs: 10 },
      http: undefined,
      secret: 's'.repeat(32),
      statusOrigin: () => 'http://127.0.0.1',
    },
  })
}

/** The tool called through the whole hallway: prepared, admitted, ready to run. */
async function admitted(caller: ReturnType<typeof callerOf>, tool: string): Promise<AdmittedCall> {
  const call = await caller.prepare({
    principal,
    tool,
    readInput: () => ({}),
    workspaceId: 'default',
    origin: undefined,
  })
  const admission = await caller.admit(call)
  if (admission.kind !== 'run') throw new Error(`not admitted: ${admission.kind}`)
  return admission.call
}

describe('Caller.run signals', () => {
  it('at the deadline: the tool sees a TimeoutError and the caller gets timeout; no listener is left', async () => {
    const seen: unknown[] = []
    const outer = new AbortController()
    const caller = callerOf([signalWatcher(seen)], 50)
    const call = await admitted(caller, 'watch_signal')
    await expect(caller.run(call, { mode: 'now', disconnect: disconnectOf(outer.signal) })).rejects.toMatchObject({
      code: 'timeout',
    })
    expect(seen).toHaveLength(1)
    expect(seen[0]).toMatchObject({ name: 'TimeoutError' })
    expect(getEventListeners(outer.signal, 'abort')).toHaveLength(0)
  })

  it('when the caller goes away: the tool sees the caller’s reason, before any deadline', async () => {
    const seen: unknown[] = []
    const outer = new AbortController()
    const reason = new Error('client disconnected')
    const caller = callerOf([signalWatcher(seen)])
    const run = caller.run(await admitted(caller, 'watch_signal'), { disconnect: disconnectOf(outer.signal) })
    setTimeout(() => outer.abort(reason), 10)
    await expect(run).rejects.toBe(reason)
    expect(seen).toEqual([reason])
    expect(getEventListeners(outer.signal, 'abort')).toHaveLength(0)
  })

  it('a caller already gone: the tool starts with an aborted signal', async () => {
    const seen: unknown[] = []
    const reason = new Error('gone before the call')
    const caller = callerOf([signalWatcher(seen)])
    const call = await admitted(caller, 'watch_signal')
    await expect(caller.run(call, { disconnect: disconnectOf(AbortSignal.abort(reason)) })).rejects.toBe(reason)
    expect(seen).toEqual([reason])
  })

  it('a disconnect heard without a reason (the Node response closing) reaches the tool as client disconnected', async () => {
    const seen: unknown[] = []
    const caller = callerOf([signalWatcher(seen)])
    let hangUp: (() => void) | undefined
    const run = caller.run(await admitted(caller, 'watch_signal'), {
      disconnect: (listener) => {
        hangUp = () => listener()
        return () => {}
      },
    })
    setTimeout(() => hangUp?.(), 10)
    await expect(run).rejects.toThrow('client disconnected')
    expect(seen).toHaveLength(1)
  })

  it('as a job the call has no synchronous deadline, and cancelling the job reaches the tool', async () => {
    const seen: unknown[] = []
    const caller = callerOf([signalWatcher(seen)], 50)
    const outcome = await caller.run(await admitted(caller, 'watch_signal'), { mode: 'job' })
    if (!('job' in outcome)) throw new Error('expected a job')
    // Past the synchronous deadline, the job is still running: nothing aborted it.
    await new Promise((resolve) => setTimeout(resolve, 150))
    expect(seen).toEqual([])
    await caller.jobs.cancel('default', outcome.job.id)
    await expect.poll(() => seen.length).toBe(1)
  })
})

describe('the tool context', () => {
  it('keeps the lazy signal on a prototype, not as an accessor of each context, with and without a deadline', async () => {
    // An accessor made per object is kept by V8 in the old generation and holds the call's whole
    // context through every minor GC (see ToolCallContext): every context's own properties are plain data.
    const seen: { ownAccessors: string[]; workspace: boolean; signal: boolean }[] = []
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
          signal: context.signal instanceof AbortSignal && !context.signal.aborted,
        })
        return {}
      },
    })
    const caller = callerOf([tool])
    await caller.run(await admitted(caller, 'look_at_context'))
    await caller.run(await admitted(caller, 'look_at_context'), { mode: 'now' })
    expect(seen).toEqual([
      { ownAccessors: [], workspace: true, signal: true },
      { ownAccessors: [], workspace: true, signal: true },
    ])
  })

  it('hands a tool the services it declares and no others', async () => {
    const shell = { policy: {} } as unknown as NonNullable<ToolServices['shell']>
    const search = { name: 'test' } as unknown as NonNullable<ToolServices['search']>
    const seen: Record<string, unknown> = {}
    const declaresNone = defineTool({
      name: 'declares_none',
      title: 'Declares none',
      description: 'Looks for services it did not declare.',
      effect: 'read',
      input: z.object({}),
      output: z.object({}),
      run: async (_input, context) => {
        // @ts-expect-error: a tool that declares no shell has none in its context's type either.
        seen.noneShell = context.shell
        seen.noneKeys = ['shell', 'search', 'http', 'jobs'].filter((name) => name in context)
        return {}
      },
    })
    const declaresShell = defineTool({
      name: 'declares_shell',
      title: 'Declares shell',
      description: 'Uses the shell it declared.',
      effect: 'read',
      uses: ['shell'],
      input: z.object({}),
      output: z.object({}),
      run: async (_input, context) => {
        seen.shell = context.shell
        seen.shellKeys = ['shell', 'search', 'http', 'jobs'].filter((name) => name in context)
        return {}
      },
    })
    const caller = callerOf([declaresNone, declaresShell], 60_000, { shell, search })
    await caller.run(await admitted(caller, 'declares_none'))
    await caller.run(await admitted(caller, 'declares_shell'))
    expect(seen).toEqual({ noneShell: undefined, noneKeys: [], shell, shellKeys: ['shell'] })
  })
})
