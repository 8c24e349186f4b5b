import { describe, expect, it } from 'vitest'
import { onDemand } from './on-demand'

function opener() {
  const log: string[] = []
  let count = 0
  const losts: Array<() => void> = []
  return {
    log,
    losts,
    options: {
      open: async (lost: () => void) => {
        count++
        losts.push(lost)
        log.push(`open ${count}`)
        return count
      },
      close: async (value: number) => {
        log.push(`close ${value}`)
      },
    },
  }
}

describe('a thing opened on demand', () => {
  it('opens once for uses that overlap, and once more after it went away on its own', async () => {
    const { log, losts, options } = opener()
    const shared = onDemand({ ...options, keepWarm: true, idleMs: undefined })
    const [a, b] = await Promise.all([shared.use(async (value) => value), shared.use(async (value) => value)])
    expect([a, b]).toEqual([1, 1])
    // The first one died: a lost() of an older opening never forgets the current one.
    losts[0]?.()
    expect(await shared.use(async (value) => value)).toBe(2)
    losts[0]?.()
    expect(await shared.use(async (value) => value)).toBe(2)
    expect(log).toEqual(['open 1', 'open 2'])
  })

  it('closes after each use where nothing stays warm, and when idle where it does', async () => {
    const cold = opener()
    const perCall = onDemand({ ...cold.options, keepWarm: false, idleMs: 60_000 })
    await perCall.use(async () => undefined)
    await perCall.use(async () => undefined)
    expect(cold.log).toEqual(['open 1', 'close 1', 'open 2', 'close 2'])
    const warm = opener()
    const idle = onDemand({ ...warm.options, keepWarm: true, idleMs: 20 })
    await idle.use(async () => undefined)
    expect(warm.log).toEqual(['open 1'])
    await new Promise((resolve) => setTimeout(resolve, 60))
    expect(warm.log).toEqual(['open 1', 'close 1'])
  })

  it('opens again after an opening failed', async () => {
    let attempts = 0
    const flaky = onDemand({
      open: async () => {
        attempts++
        if (attempts === 1) throw new Error('no')
        return attempts
      },
      close: async () => {},
      keepWarm: true,
      idleMs: undefined,
    })
    await expect(flaky.get()).rejects.toThrow('no')
    expect(await flaky.get()).toBe(2)
  })
})
