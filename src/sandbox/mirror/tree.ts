import { rmdirSync, unlinkSync } from 'node:fs'
import { type HandleWalkOptions, hasCode, lstatOrNull, walkHandles } from './handles'

/**
 * Removal and measurement of trees the sandbox wrote, at any depth, on top of walkHandles (no full
 * path is ever handed to the system, so nesting past PATH_MAX changes nothing).
 */
/** Removes an entry of any kind at any depth below folder (a path); nothing is followed. */
export async function removeTree(location: string | Buffer): Promise<void> {
  const path = Buffer.from(location)
  const stats = lstatOrNull(path)
  if (!stats) return
  if (!stats.isDirectory()) {
    unlinkOrGone(path)
    return
  }
  await walkHandles(
    path,
    {
      enter(entry) {
        if (entry.stats.isDirectory()) return true
        unlinkOrGone(entry.at)
        return false
      },
      leave(entry) {
        rmdirOrGone(entry.at)
      },
    },
    { unlock: true, ordered: false },
  )
  rmdirOrGone(path)
}

function unlinkOrGone(path: Buffer): void {
  try {
    unlinkSync(path)
  } catch (error) {
    if (!hasCode(error, 'ENOENT')) throw error
  }
}

function rmdirOrGone(path: Buffer): void {
  try {
    rmdirSync(path)
  } catch (error) {
    if (!hasCode(error, 'ENOENT')) throw error
  }
}

export interface TreeUsage {
  /**
   * Sum of the sizes of regular files, each path counted (a hard link counts again: the sync-back
   * would upload it again).
   */
  bytes: number
  entries: number
}

/** Bytes and entries below a folder at any depth; stops counting past maxEntries. */
export async function measureTree(
  root: string | Buffer,
  maxEntries: number,
  options: HandleWalkOptions = {},
): Promise<TreeUsage> {
  let bytes = 0
  let entries = 0
  await walkHandles(
    root,
    {
      enter(entry) {
        entries++
        if (entries > maxEntries) return 'stop'
        if (entry.stats.isFile()) bytes += Number(entry.stats.size)
        return entry.stats.isDirectory()
      },
    },
    { ...options, ordered: false },
  ).catch((error: unknown) => {
    // The tree changes while a running command is measured: a folder that vanished mid-walk is nothing.
    if (!hasCode(error, 'ENOENT', 'ENOTDIR')) throw error
  })
  return { bytes, entries }
}
