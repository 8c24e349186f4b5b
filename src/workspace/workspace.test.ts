import { describe, expect, it } from 'vitest'
import { ToolError } from '../core/errors'
import { createMemoryStorage } from '../storage/memory'
import type { ObjectStore } from '../storage/store'
import { createWorkspace } from './workspace'

const encode = (text: string) => new TextEncoder().encode(text)
const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes)

/** A store whose next conditional put of `key` is preceded by another writer's put of `intruder`. */
function racing(storage: ObjectStore, key: string, intruder: string): ObjectStore {
  let armed = true
  return {
    ...storage,
    async put(target, body, options) {
      if (armed && target === key && options?.ifMatch !== undefined) {
        armed = false
        await storage.put(key, intruder)
      }
      return storage.put(target, body, options)
    },
  }
}

function replace(oldText: string, newText: string) {
  return (file: { bytes: Uint8Array; path: string }) => {
    const text = decode(file.bytes)
    if (!text.includes(oldText)) throw new ToolError('not_found', `old_text was not found in ${file.path}`)
    return { bytes: encode(text.replace(oldText, newText)), result: undefined }
  }
}

describe('workspace edits by compare-and-swap', () => {
  const key = 'tenants/t/workspaces/w/notes.txt'

  it('applies an edit that lost a race to the version that won, keeping both changes', async () => {
    const storage = createMemoryStorage()
    await storage.put(key, 'alpha\nbeta\n')
    const workspace = createWorkspace(racing(storage, key, 'alpha\nbeta\ngamma\n'), 't', 'w')
    await workspace.editFile('notes.txt', 1000, replace('alpha', 'ALPHA'))
    expect(decode((await storage.get(key))?.body ?? new Uint8Array())).toBe('ALPHA\nbeta\ngamma\n')
  })

  it('answers 409 naming the change when the edit no longer applies to the version that won', async () => {
    const storage = createMemoryStorage()
    await storage.put(key, 'alpha\nbeta\n')
    const workspace = createWorkspace(racing(storage, key, 'omega\n'), 't', 'w')
    const refused = await workspace.editFile('notes.txt', 1000, replace('alpha', 'ALPHA')).catch((error) => error)
    expect(refused).toBeInstanceOf(ToolError)
    expect(refused).toMatchObject({ code: 'conflict' })
    expect(refused.message).toMatch(/changed by another writer.*no longer applies.*old_text was not found/)
    expect(decode((await storage.get(key))?.body ?? new Uint8Array())).toBe('omega\n')
  })

  it('overwrites and deletes only the version it found (created says which write it was)', async () => {
    const storage = createMemoryStorage()
    const workspace = createWorkspace(storage, 't', 'w')
    expect((await workspace.writeFile('a.txt', encode('one'), 100)).created).toBe(true)
    expect((await workspace.writeFile('a.txt', encode('two'), 100)).created).toBe(false)
    const raced = createWorkspace(racing(storage, 'tenants/t/workspaces/w/a.txt', 'three'), 't', 'w')
    // The whole-file write retries over the version that won: last writer wins, nothing half done.
    await raced.writeFile('a.txt', encode('four'), 100)
    expect(decode((await storage.get('tenants/t/workspaces/w/a.txt'))?.body ?? new Uint8Array())).toBe('four')
    expect(await workspace.deleteFile('a.txt')).toEqual({ path: 'a.txt', deleted: true })
    expect(await workspace.deleteFile('a.txt')).toEqual({ path: 'a.txt', deleted: false })
  })

  it('gives up with 409 and Retry-After when the file keeps changing under every attempt', async () => {
    const storage = createMemoryStorage()
    await storage.put(key, 'alpha\n')
    let writes = 0
    const busy: ObjectStore = {
      ...storage,
      async put(target, body, options) {
        if (target === key && options?.ifMatch !== undefined) await storage.put(key, `alpha ${writes++}\n`)
        return storage.put(target, body, options)
      },
    }
    const refused = await createWorkspace(busy, 't', 'w')
      .editFile('notes.txt', 1000, replace('alpha', 'ALPHA'))
      .catch((error) => error)
    expect(refused).toMatchObject({ code: 'conflict', headers: { 'retry-after': '1' } })
    expect(refused.message).toMatch(/kept changing/)
    expect(writes).toBe(16)
  })
})
