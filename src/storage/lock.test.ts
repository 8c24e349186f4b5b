import { describe, expect, it } from 'vitest'
import { withObjectLock } from './lock'
import { createMemoryStorage } from './memory'
import type { ObjectStore } from './store'

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

function slowly(storage: ObjectStore): ObjectStore {
  const pause = () => new Promise((resolve) => setTimeout(resolve, Math.random() * 15))
  return {
    ...storage,
    head: async (key) => {
      const found = await storage.head(key)
      await pause()
      return found
    },
    delete: async (key) => {
      await pause()
      await storage.delete(key)
    },
  }
}

describe('withObjectLock takeover', () => {
  it('lets one waiter at a time through when many find the same abandoned lock', async () => {
    for (let round = 0; round < 5; round++) {
      // Calls that take their time, as over a network: a slow delete lands after another waiter's create.
      const storage = slowly(createMemoryStorage())
      await storage.put('locks/d.lock', 'crashed holder')
      // Stale by far, while a live holder (a 5 ms body and ~15 ms calls) stays well inside staleMs even on
      // a loaded machine: a tighter staleMs lets a merely slow holder be taken over, which is by design.
      await new Promise((resolve) => setTimeout(resolve, 450))
      let inside = 0
      let most = 0
      await Promise.all(
        Array.from({ length: 8 }, () =>
          withObjectLock(
            storage,
            'locks/d.lock',
            async () => {
              inside++
              most = Math.max(most, inside)
              await new Promise((resolve) => setTimeout(resolve, 5))
              inside--
            },
            { staleMs: 400 },
          ),
        ),
      )
      expect(most, `round ${round}`).toBe(1)
      expect(await storage.head('locks/d.lock')).toBeNull()
      expect((await storage.list('locks/')).objects).toEqual([])
    }
  })

  it('does not free a lock that is no longer its own', async () => {
    const storage = createMemoryStorage()
    await withObjectLock(storage, 'locks/e.lock', async () => {
      // While this holder runs, its lock is replaced (taken over after it went stale).
      await storage.put('locks/e.lock', 'another holder')
    })
    expect(new TextDecoder().decode((await storage.get('locks/e.lock'))?.body)).toBe('another holder')
  })
})
