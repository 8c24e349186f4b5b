import { execFileSync } from 'node:child_process'
import { lstat, mkdir, mkdtemp, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { describeObjectStoreContract } from '../../test/support/storage-contract'
import { ToolError } from '../core/errors'
import { createFsStorage } from './fs'
import type { ObjectStore } from './store'

describeObjectStoreContract('fs', async () => {
  const directory = await mkdtemp(join(tmpdir(), 'toolport-fs-contract-'))
  // A root that does not exist yet: creation must make it.
  const store = await createFsStorage({ root: join(directory, 'nested', 'root') })
  return { store, cleanup: () => rm(directory, { recursive: true, force: true }) }
})

describe('fs storage', () => {
  let directory = ''
  let root = ''
  let outside = ''
  let store: ObjectStore

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'toolport-fs-'))
    root = join(directory, 'root')
    outside = join(directory, 'outside')
    await mkdir(outside)
    await writeFile(join(outside, 'secret.txt'), 'top secret')
    store = await createFsStorage({ root })
  })

  afterAll(async () => {
    await rm(directory, { recursive: true, force: true })
  })

  async function expectSymlinkRefusal(operation: Promise<unknown>): Promise<void> {
    const error = await operation.then(
      () => undefined,
      (caught: unknown) => caught,
    )
    expect(error).toBeInstanceOf(ToolError)
    expect(error).toMatchObject({
      code: 'permission_denied',
      hint: 'Symbolic links are not followed by the storage layer.',
    })
  }

  async function expectOutsideUntouched(): Promise<void> {
    expect(await readdir(outside)).toEqual(['secret.txt'])
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('top secret')
  }

  it('keeps the old content and leaves no temp file when a stream body fails midway', async () => {
    await store.put('atomic/file.txt', 'old content')
    const failure = new Error('upstream broke')
    let sent = 0
    const failing = new ReadableStream<Uint8Array>({
      pull(controller) {
        sent++
        if (sent > 3) controller.error(failure)
        else controller.enqueue(new Uint8Array(64 * 1024).fill(sent))
      },
    })
    await expect(store.put('atomic/file.txt', failing)).rejects.toBe(failure)
    expect(new TextDecoder().decode((await store.get('atomic/file.txt'))?.body)).toBe('old content')
    expect(await readdir(join(root, '.toolport-tmp'))).toEqual([])

    await expect(store.put('atomic/new/file.txt', failingAtOnce(failure))).rejects.toBe(failure)
    expect(await readdir(join(root, '.toolport-tmp'))).toEqual([])
    expect(await readdir(join(root, 'atomic'))).toEqual(['file.txt'])
  })

  it('refuses to work through a symlinked folder pointing outside the root', async () => {
    await symlink(outside, join(root, 'link'))
    await store.put('plain.txt', 'plain')

    await expectSymlinkRefusal(store.get('link/secret.txt'))
    await expectSymlinkRefusal(store.getWithin('link/secret.txt', 1000))
    await expectSymlinkRefusal(store.getStream('link/secret.txt'))
    await expectSymlinkRefusal(store.head('link/secret.txt'))
    await expectSymlinkRefusal(store.put('link/secret.txt', 'overwritten'))
    await expectSymlinkRefusal(store.put('link/new.txt', 'planted'))
    await expectSymlinkRefusal(store.put('link/deeper/new.txt', 'planted'))
    await expectSymlinkRefusal(store.put('link/streamed.txt', new Blob(['planted']).stream()))
    await expectSymlinkRefusal(store.delete('link/secret.txt'))
    await expectSymlinkRefusal(store.copy('link/secret.txt', 'stolen.txt'))
    await expectSymlinkRefusal(store.copy('plain.txt', 'link/planted.txt'))
    await expectSymlinkRefusal(store.get('link'))
    await expectSymlinkRefusal(store.put('link', 'replace the link'))

    expect(await store.list('link/')).toEqual({ objects: [], prefixes: [] })
    expect(await store.list('link/', { delimiter: '/' })).toEqual({ objects: [], prefixes: [] })
    const everything = await store.list('')
    expect(everything.objects.map((object) => object.key).filter((key) => key.startsWith('link'))).toEqual([])
    expect((await store.list('', { delimiter: '/' })).prefixes).not.toContain('link/')
    expect(await store.head('stolen.txt')).toBeNull()

    await expectOutsideUntouched()
    expect((await lstat(join(root, 'link'))).isSymbolicLink()).toBe(true)
  })

  it('refuses a symlink as the final component', async () => {
    await symlink(join(outside, 'secret.txt'), join(root, 'file-link'))
    await expectSymlinkRefusal(store.get('file-link'))
    await expectSymlinkRefusal(store.getWithin('file-link', 1000))
    await expectSymlinkRefusal(store.getStream('file-link'))
    await expectSymlinkRefusal(store.head('file-link'))
    await expectSymlinkRefusal(store.put('file-link', 'overwritten'))
    await expectSymlinkRefusal(store.delete('file-link'))
    await expectSymlinkRefusal(store.copy('file-link', 'stolen-too.txt'))
    expect((await store.list('file')).objects).toEqual([])
    await expectOutsideUntouched()
  })

  // The guard proves a clean path with one realpath of the parent folder: links deeper in the path,
  // links that stay inside the root, dangling links and loops must all still be refused.
  it('refuses a symlink anywhere in a deep path, wherever it points', async () => {
    await store.put('deep/a/b/file.txt', 'inside')
    const deep = join(root, 'deep')
    await symlink(join(deep, 'a'), join(deep, 'alias'))
    await symlink(outside, join(deep, 'out'))
    await symlink(join(directory, 'nowhere'), join(deep, 'dangling'))
    await symlink(join(deep, 'loop'), join(deep, 'loop'))
    await symlink(root, join(deep, 'a', 'b', 'to-root'))
    const keys = [
      'deep/alias/b/file.txt',
      'deep/out/secret.txt',
      'deep/dangling/file.txt',
      'deep/loop/file.txt',
      'deep/a/b/to-root/deep/a/b/file.txt',
    ]
    for (const key of keys) {
      await expectSymlinkRefusal(store.get(key))
      await expectSymlinkRefusal(store.getWithin(key, 1000))
      await expectSymlinkRefusal(store.getStream(key))
      await expectSymlinkRefusal(store.head(key))
      await expectSymlinkRefusal(store.delete(key))
      await expectSymlinkRefusal(store.put(key, 'planted'))
      await expectSymlinkRefusal(store.put(`${key.slice(0, key.lastIndexOf('/'))}/new/planted.txt`, 'planted'))
      await expectSymlinkRefusal(store.copy(key, 'deep/copied.txt'))
    }
    // Listing through any of them finds nothing (a folder behind a link holds no objects), nor below a file.
    for (const folder of ['deep/alias/', 'deep/out/', 'deep/dangling/', 'deep/loop/', 'deep/a/b/to-root/deep/a/b/']) {
      expect(await store.list(folder), folder).toEqual({ objects: [], prefixes: [] })
      expect(await store.list(folder, { delimiter: '/' }), folder).toEqual({ objects: [], prefixes: [] })
    }
    expect(await store.list('deep/a/b/file.txt/')).toEqual({ objects: [], prefixes: [] })
    expect((await store.list('deep/a/b/')).objects.map((object) => object.key)).toEqual(['deep/a/b/file.txt'])
    expect(new TextDecoder().decode((await store.get('deep/a/b/file.txt'))?.body)).toBe('inside')
    expect((await readdir(join(deep, 'a', 'b'))).sort()).toEqual(['file.txt', 'to-root'])
    await expect(lstat(join(directory, 'nowhere'))).rejects.toMatchObject({ code: 'ENOENT' })
    expect(await store.head('deep/copied.txt')).toBeNull()
    await expectOutsideUntouched()
  })

  // What is not a plain file, or is reached through a link planted after a clean read of the same
  // key, must never be read.
  it('answers null for a folder or a FIFO without waiting, and refuses a link planted after a read', async () => {
    await store.put('kinds/file.txt', 'plain')
    await mkdir(join(root, 'kinds', 'folder'))
    execFileSync('mkfifo', [join(root, 'kinds', 'pipe')])
    for (const key of ['kinds/folder', 'kinds/pipe']) {
      expect(await store.get(key), key).toBeNull()
      expect(await store.getWithin(key, 1000), key).toBeNull()
    }
    expect(new TextDecoder().decode((await store.get('kinds/file.txt'))?.body)).toBe('plain')
    await rename(join(root, 'kinds'), join(root, 'kinds-real'))
    await symlink(join(root, 'kinds-real'), join(root, 'kinds'))
    await expectSymlinkRefusal(store.get('kinds/file.txt'))
    await expectSymlinkRefusal(store.getWithin('kinds/file.txt', 1000))
    await rm(join(root, 'kinds'))
    await symlink(join(outside, 'secret.txt'), join(root, 'kinds-real', 'file.txt.link'))
    await rename(join(root, 'kinds-real', 'file.txt.link'), join(root, 'kinds-real', 'file.txt'))
    await expectSymlinkRefusal(store.getWithin('kinds-real/file.txt', 1000))
    await expectOutsideUntouched()
  })

  it('answers null for a file or a missing folder in the middle of a path', async () => {
    await store.put('middle/file.txt', 'a file')
    for (const key of ['middle/file.txt/below.txt', 'middle/missing/below.txt', 'absent/below.txt']) {
      expect(await store.get(key)).toBeNull()
      expect(await store.getWithin(key, 1000)).toBeNull()
      expect(await store.getStream(key)).toBeNull()
      expect(await store.head(key)).toBeNull()
      await store.delete(key)
    }
    await expect(store.put('middle/file.txt/below.txt', 'x')).rejects.toMatchObject({ code: 'conflict' })
    expect(new TextDecoder().decode((await store.get('middle/file.txt'))?.body)).toBe('a file')
  })

  it('reports a file where a folder is needed, and a folder where a file is needed, as conflicts', async () => {
    await store.put('conflict/a', 'a file')
    await expect(store.put('conflict/a/b', 'x')).rejects.toMatchObject({ code: 'conflict' })
    await store.put('conflict/dir/inner.txt', 'inner')
    await expect(store.put('conflict/dir', 'x')).rejects.toMatchObject({ code: 'conflict' })
    expect(new TextDecoder().decode((await store.get('conflict/a'))?.body)).toBe('a file')
  })

  it('treats a folder as no object: get and head return null, delete does nothing', async () => {
    await store.put('folder-key/inside.txt', 'inside')
    expect(await store.get('folder-key')).toBeNull()
    expect(await store.getWithin('folder-key', 1000)).toBeNull()
    expect(await store.getStream('folder-key')).toBeNull()
    expect(await store.head('folder-key')).toBeNull()
    await store.delete('folder-key')
    expect(await store.head('folder-key/inside.txt')).not.toBeNull()
    await expect(store.copy('folder-key', 'elsewhere')).rejects.toMatchObject({ code: 'not_found' })
  })

  it('prunes folders left empty by a delete, and only those', async () => {
    await store.put('prune/a/b/c/file.txt', 'deep')
    await store.put('prune/a/sibling.txt', 'sibling')
    await store.delete('prune/a/b/c/file.txt')
    expect(await readdir(join(root, 'prune', 'a'))).toEqual(['sibling.txt'])
    await store.delete('prune/a/sibling.txt')
    await expect(lstat(join(root, 'prune'))).rejects.toMatchObject({ code: 'ENOENT' })
    expect((await lstat(root)).isDirectory()).toBe(true)
  })

  it('hides the temp folder from listings and refuses keys inside it', async () => {
    await store.put('visible.txt', 'v')
    expect(await readdir(root)).toContain('.toolport-tmp')
    const flat = await store.list('')
    expect(flat.objects.some((object) => object.key.startsWith('.toolport-tmp'))).toBe(false)
    const folded = await store.list('', { delimiter: '/' })
    expect(folded.prefixes).not.toContain('.toolport-tmp/')
    expect(await store.list('.toolport')).toEqual({ objects: [], prefixes: [] })
    await expect(store.put('.toolport-tmp/x', 'x')).rejects.toMatchObject({ code: 'permission_denied' })
    await expect(store.get('.toolport-tmp/x')).rejects.toMatchObject({ code: 'permission_denied' })
    await expect(store.list('.toolport-tmp/')).rejects.toMatchObject({ code: 'permission_denied' })
  })

  it('ignores an empty leftover folder in listings', async () => {
    await mkdir(join(root, 'leftover', 'empty'), { recursive: true })
    expect((await store.list('', { delimiter: '/' })).prefixes).not.toContain('leftover/')
    expect(await store.list('leftover/')).toEqual({ objects: [], prefixes: [] })
  })

  it('accepts a root reached through a symlink', async () => {
    const real = join(directory, 'real-root')
    await mkdir(real)
    await symlink(real, join(directory, 'alias-root'))
    const aliased = await createFsStorage({ root: join(directory, 'alias-root') })
    await aliased.put('through-alias.txt', 'works')
    expect(await readFile(join(real, 'through-alias.txt'), 'utf8')).toBe('works')
  })

  it('check() fails with unavailable once the root is gone', async () => {
    const gone = join(directory, 'gone')
    const doomed = await createFsStorage({ root: gone })
    await expect(doomed.check()).resolves.toBeUndefined()
    await rm(gone, { recursive: true })
    await expect(doomed.check()).rejects.toMatchObject({ code: 'unavailable' })
  })
})

function failingAtOnce(failure: Error): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      controller.error(failure)
    },
  })
}
