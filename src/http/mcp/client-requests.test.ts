import { describe, expect, it } from 'vitest'
import type { Principal } from '../../auth/principal'
import { createClientRequests, randomRequestIdBase } from './client-requests'

const principal = (tenant: string, id: string) => ({ tenant, id }) as Principal

describe('answers to requests relayed to a client', () => {
  it('reach the call that asked, only from the key that called', () => {
    const requests = createClientRequests()
    const delivered: unknown[] = []
    const done = requests.expect(41, principal('acme', 'key-1'), (message) => delivered.push(message))
    const answer = { jsonrpc: '2.0', id: 41, result: { action: 'accept' } }
    expect(requests.deliver(principal('acme', 'key-2'), answer)).toBe(false)
    expect(requests.deliver(principal('globex', 'key-1'), answer)).toBe(false)
    expect(delivered).toEqual([])
    expect(requests.deliver(principal('acme', 'key-1'), answer)).toBe(true)
    expect(delivered).toEqual([answer])
    done()
    expect(requests.deliver(principal('acme', 'key-1'), answer)).toBe(false)
  })

  it('are not requests, notifications, unknown ids or half a batch', () => {
    const requests = createClientRequests()
    requests.expect(7, principal('acme', 'key-1'), () => {})
    const owner = principal('acme', 'key-1')
    expect(requests.deliver(owner, { jsonrpc: '2.0', id: 7, method: 'tools/list' })).toBe(false)
    expect(requests.deliver(owner, { jsonrpc: '2.0', id: 7 })).toBe(false)
    expect(requests.deliver(owner, { jsonrpc: '2.0', id: '7', result: {} })).toBe(false)
    expect(
      requests.deliver(owner, [
        { jsonrpc: '2.0', id: 7, result: {} },
        { jsonrpc: '2.0', id: 8, result: {} },
      ]),
    ).toBe(false)
    expect(requests.deliver(owner, [])).toBe(false)
    expect(requests.deliver(owner, null)).toBe(false)
  })

  it('are awaited under ids no two servers share', () => {
    const bases = new Set(Array.from({ length: 1000 }, randomRequestIdBase))
    expect(bases.size).toBe(1000)
    for (const base of bases) expect(Number.isSafeInteger(base + 1_000_000)).toBe(true)
  })
})
