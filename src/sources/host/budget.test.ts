import { describe, expect, it } from 'vitest'
import { createMemoryStorage } from '../../storage/memory'
import { createSourceBudget } from './budget'

describe('a tenant source budget', () => {
  it('counts reservations of PUTs in flight, and stops counting one whose source never came', async () => {
    let time = Date.parse('2026-12-06T00:00:00Z')
    const budget = createSourceBudget(createMemoryStorage(), {
      maxSources: 10,
      maxTools: 5,
      pendingMs: 60_000,
      now: () => time,
    })
    await budget.reserve('acme', 'one', 3, new Map())
    // Not stored yet (its PUT is in flight), it still counts.
    await expect(budget.reserve('acme', 'two', 3, new Map())).rejects.toMatchObject({ code: 'size_exceeded' })
    time += 61_000
    // Its PUT never stored it: past the pending window it no longer counts.
    await budget.reserve('acme', 'two', 3, new Map())
    // A stored source counts whatever its reservation's age.
    time += 61_000
    await expect(budget.reserve('acme', 'three', 3, new Map([['two', 3]]))).rejects.toMatchObject({
      code: 'size_exceeded',
    })
  })

  it('counts a stored source it has no reservation for by the tools it loaded with', async () => {
    const budget = createSourceBudget(createMemoryStorage(), { maxSources: 2, maxTools: 100 })
    await expect(
      budget.reserve(
        'acme',
        'new',
        1,
        new Map([
          ['a', 1],
          ['b', 1],
        ]),
      ),
    ).rejects.toThrow(/2 sources/)
    await budget.reserve(
      'acme',
      'a',
      1,
      new Map([
        ['a', 1],
        ['b', 1],
      ]),
    )
  })

  it('gives the earlier reservation back when the manifest could not be stored', async () => {
    const budget = createSourceBudget(createMemoryStorage(), { maxSources: 10, maxTools: 4 })
    await budget.reserve('acme', 'one', 1, new Map())
    const undo = await budget.reserve('acme', 'one', 4, new Map())
    await undo()
    // Back to one tool reserved for "one": three more fit.
    await budget.reserve('acme', 'two', 3, new Map())
  })
})
