import type { BigIntStats } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { foldersOf, foldersToList, mergedView, type UpperEntry } from './merged-view'

const stats = {} as BigIntStats
const lower = ['top.txt', 'a/one.txt', 'a/deep/two.txt', 'b/three.txt']
const folders = foldersOf(lower)

function upperOf(entries: Record<string, UpperEntry['kind']>): Map<string, UpperEntry> {
  return new Map(Object.entries(entries).map(([path, kind]) => [path, { path, kind, stats }]))
}

describe('the merged view of a run over an overlay', () => {
  it('keeps everything when upper is empty', () => {
    const view = mergedView(lower, folders, new Map(), new Map())
    expect(view.keptFiles).toEqual(lower)
    expect(view.goneFiles).toEqual([])
    expect(view.keptFolders.sort()).toEqual(['a', 'a/deep', 'b'])
  })

  it('reads a whiteout at the root as a deletion, and a folder of both layers by its listing', () => {
    const upper = upperOf({ 'top.txt': 'whiteout', a: 'directory', 'a/new.txt': 'file' })
    expect(foldersToList(upper, folders)).toEqual(['a'])
    const merged = mergedView(lower, folders, upper, new Map([['a', new Set(['one.txt', 'deep', 'new.txt'])]]))
    expect(merged.goneFiles).toEqual(['top.txt'])
    expect(merged.keptFiles).toEqual(['a/one.txt', 'a/deep/two.txt', 'b/three.txt'])
    // The same layers, but the listing shows the folder made again (opaque): the old files are hidden.
    const opaque = mergedView(lower, folders, upper, new Map([['a', new Set(['new.txt'])]]))
    expect(opaque.goneFiles).toEqual(['top.txt', 'a/one.txt', 'a/deep/two.txt'])
    expect(opaque.keptFolders).toEqual(['b'])
  })

  it('hides a folder of the copy replaced by a file, and a file replaced by a folder', () => {
    const upper = upperOf({ b: 'file', 'top.txt': 'directory', 'top.txt/in.txt': 'file' })
    const view = mergedView(lower, folders, upper, new Map())
    expect(view.goneFiles.sort()).toEqual(['b/three.txt', 'top.txt'])
    expect(view.unlisted).toEqual([])
  })

  it('names a folder of both layers left without a listing, instead of guessing', () => {
    const upper = upperOf({ a: 'directory', 'a/deep': 'directory' })
    const view = mergedView(lower, folders, upper, new Map([['a', new Set(['deep', 'one.txt'])]]))
    expect(view.unlisted).toEqual(['a/deep'])
  })
})
