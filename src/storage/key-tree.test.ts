import { describe, expect, it } from 'vitest'
import { withKeyTree } from './key-tree'
import { createMemoryStorage } from './memory'
import type { ObjectStore } from './store'

/** A store that counts the reads the file-or-folder check makes (head and list). */
function counted(): { store: ObjectStore; checks: () => number } {
  const inner = createMemoryStorage()
  let checks = 0
  const store: ObjectStore = {
    ...inner,
    head: (key) => {
      checks++
      return inner.head(key)
    },
    list: (prefix, options) => {
      checks++
      return inner.list(prefix, options)
    },
  }
  return { store: withKeyTree(store), checks: () => checks }
}

describe('withKeyTree', () => {
  it('checks ancestors and children before and after a put', async () => {
    const { store, checks } = counted()
    await store.put('usage/t/2026-01-01/i.json', '{}')
    // Three ancestors and the listing below the key, before the write and after it.
    expect(checks()).toBe(8)
  })

  it('writes a record with no check', async () => {
    const { store, checks } = counted()
    const info = await store.put('usage/t/2026-01-01/i.json', '{}', { record: true })
    expect(checks()).toBe(0)
    expect(info.size).toBe(2)
    expect(await store.get('usage/t/2026-01-01/i.json')).not.toBeNull()
  })

  it('still refuses a key below a file on an ordinary put', async () => {
    const { store } = counted()
    await store.put('a', 'x')
    await expect(store.put('a/b', 'y')).rejects.toMatchObject({ code: 'conflict' })
  })
})
