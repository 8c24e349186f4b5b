import { describe, expect, it } from 'vitest'
import type { Principal } from '../../auth/principal'
import { createParkedCalls } from './parked-calls'

const owner = { tenant: 'acme', id: 'key-1' } as Principal

describe('parked calls (2026-07-28 multi round-trip requests)', () => {
  it('hand a request to the client, wait for its answer, and finish', async () => {
    const calls = createParkedCalls()
    const call = calls.start(owner)
    const answered = call.ask('elicitation/create', { message: 'name?' }, new AbortController().signal)
    const step = await call.next()
    expect(step).toEqual({ kind: 'ask', key: 'input-1', method: 'elicitation/create', params: { message: 'name?' } })
    calls.park(call)
    expect(calls.find(call.id, owner)).toBe(call)
    expect(calls.find(call.id, { tenant: 'acme', id: 'key-2' } as Principal)).toBeUndefined()
    expect(call.respond('input-9', {})).toBe(false)
    expect(call.respond('input-1', { action: 'accept' })).toBe(true)
    expect(await answered).toEqual({ action: 'accept' })
    call.finish({ result: { content: [] } })
    expect(await call.next()).toEqual({ kind: 'done', answer: { result: { content: [] } } })
    expect(calls.find(call.id, owner)).toBeUndefined()
  })

  it('ends a request the call stopped waiting for', async () => {
    const calls = createParkedCalls()
    const call = calls.start(owner)
    const controller = new AbortController()
    const answered = call.ask('sampling/createMessage', {}, controller.signal)
    controller.abort(new Error('gone'))
    await expect(answered).rejects.toThrow('gone')
    expect(call.respond('input-1', {})).toBe(false)
  })
})
