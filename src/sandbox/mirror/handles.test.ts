import { closeSync, constants, mkdirSync, openSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { pathIn, walkHandles } from './handles'
import { measureTree, removeTree } from './tree'

const folderFlags = constants.O_RDONLY | constants.O_DIRECTORY

/** A chain of `depth` folders below root, built through descriptors (no full path is ever used). */
function chain(root: string, depth: number, name: string, atBottom?: (folder: number) => void): void {
  let folder = openSync(root, folderFlags)
  for (let level = 0; level < depth; level++) {
    const next = pathIn(folder, Buffer.from(name))
    mkdirSync(next)
    const child = openSync(next, folderFlags)
    closeSync(folder)
    folder = child
  }
  atBottom?.(folder)
  closeSync(folder)
}

const openDescriptors = () => readdirSync('/proc/self/fd').length

let root: string
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'toolport-handles-'))
})
afterEach(async () => {
  await removeTree(root)
})

describe('walks with handles relative to their parent', () => {
  it('measures and removes a chain nested far past PATH_MAX, holding few descriptors', async () => {
    // 300 levels of 200 characters: 60,300 characters, fifteen times PATH_MAX.
    chain(join(root, ''), 300, 'd'.repeat(200), (bottom) => {
      writeFileSync(pathIn(bottom, Buffer.from('payload')), Buffer.alloc(5000))
      symlinkSync('/etc/passwd', pathIn(bottom, Buffer.from('link')))
    })
    const before = openDescriptors()
    expect(await measureTree(root, 10_000)).toEqual({ bytes: 5000, entries: 302 })
    expect(openDescriptors()).toBe(before)
    await removeTree(join(root, 'd'.repeat(200)))
    expect(readdirSync(root)).toEqual([])
    expect(openDescriptors()).toBe(before)
  })

  it('stops counting past maxEntries', async () => {
    for (let index = 0; index < 50; index++) writeFileSync(join(root, `f${index}`), 'x')
    expect((await measureTree(root, 10)).entries).toBe(11)
  })

  it('visits parents before children in byte order, and leaves each folder entered once', async () => {
    mkdirSync(join(root, 'b/c'), { recursive: true })
    writeFileSync(join(root, 'a'), '')
    writeFileSync(join(root, 'b/c/d'), '')
    const seen: string[] = []
    await walkHandles(root, {
      enter(entry) {
        seen.push(`enter ${[...entry.parents, entry.name].join('/')}`)
        return entry.stats.isDirectory()
      },
      leave(entry) {
        seen.push(`leave ${[...entry.parents, entry.name].join('/')}`)
      },
    })
    expect(seen).toEqual(['enter a', 'enter b', 'enter b/c', 'enter b/c/d', 'leave b/c', 'leave b'])
  })

  it('never follows a symbolic link, also not one standing for a folder', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'toolport-handles-outside-'))
    try {
      writeFileSync(join(outside, 'keep'), 'data')
      symlinkSync(outside, join(root, 'escape'))
      expect(await measureTree(root, 100)).toEqual({ bytes: 0, entries: 1 })
      await removeTree(root)
      expect(readdirSync(outside)).toEqual(['keep'])
    } finally {
      await rm(outside, { recursive: true, force: true })
    }
  })
})
