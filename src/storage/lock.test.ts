import { describe, expect, it } from 'vitest'
import { withObjectLock } from './lock'
import { createMemoryStorage } from './memory'

describe('withObjectLock', () => {
  it('runs critical sections of one key one at a time, and removes the lock after each', async () => {
    const storage = createMemoryStorage()
    let inside = 0
    let most = 0
    await Promise.all(
      Array.from({ length: 10 }, () =>
        withObjectLock(storage, 'locks/a.lock', async () => {
          inside++
          most = Math.max(most, inside)
          await new Promise((resolve) => setTimeout(resolve, 5))
          inside--
        }),
      ),
    )
    expect(most).toBe(1)
    expect(await storage.head('locks/a.lock')).toBeNull()
  })

  it('releases the lock when the critical section throws', async () => {
    const storage = createMemoryStorage()
    await expect(
      withObjectLock(storage, 'locks/b.lock', async () => {
        throw new Error('boom')
      }),
    ).rejects.toThrow('boom')
    expect(await storage.head('locks/b.lock')).toBeNull()
  })

  it('gives up with unavailable while a live lock is held, and takes over an abandoned one', async () => {
    const storage = createMemoryStorage()
    await storage.put('locks/c.lock', 'held')
    await expect(withObjectLock(storage, 'locks/c.lock', async () => 'ran', { waitMs: 100 })).rejects.toMatchObject({
      code: 'unavailable',
    })
    expect(await storage.head('locks/c.lock')).not.toBeNull()
    await new Promise((resolve) => setTimeout(resolve, 60))
    // Older than staleMs: its holder is taken to have crashed.
    expect(await withObjectLock(storage, 'locks/c.lock', async () => 'ran', { staleMs: 50 })).toBe('ran')
    expect(await storage.head('locks/c.lock')).toBeNull()
  })
})
