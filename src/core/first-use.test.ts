import { describe, expect, it } from 'vitest'
import { onFirstUse } from './first-use'

describe('onFirstUse', () => {
  it('runs the load once and gives every call its result', async () => {
    let runs = 0
    const value = onFirstUse(async () => ++runs)
    expect(await Promise.all([value(), value(), value()])).toEqual([1, 1, 1])
    expect(await value()).toBe(1)
    expect(runs).toBe(1)
  })

  it('runs it again after a failure, which the failed calls all see', async () => {
    let runs = 0
    const value = onFirstUse(async () => {
      runs++
      if (runs === 1) throw new Error('not yet')
      return runs
    })
    await expect(Promise.all([value(), value()])).rejects.toThrow('not yet')
    expect(await value()).toBe(2)
    expect(await value()).toBe(2)
    expect(runs).toBe(2)
  })
})
