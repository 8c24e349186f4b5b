import { type BigIntStats, lstatSync, realpathSync } from 'node:fs'
import { lstat } from 'node:fs/promises'
import { join } from 'node:path'
import { ToolError } from '../core/errors'
import { hasCode, symlinkError } from './fs-errors'
import { assertValidKey, assertValidPrefix } from './keys'

/** Temp files live inside the root so the final rename never crosses filesystems. */
export const tempFolder = '.toolport-tmp'

export function checkedKey(key: string): string {
  assertValidKey(key)
  if (key === tempFolder || key.startsWith(`${tempFolder}/`)) throw reservedError()
  return key
}

export function checkedPrefix(prefix: string): string {
  assertValidPrefix(prefix)
  if (prefix.startsWith(`${tempFolder}/`)) throw reservedError()
  return prefix
}

function reservedError(): ToolError {
  return new ToolError('permission_denied', 'This storage key is reserved.', {
    hint: `Names under "${tempFolder}/" are used by the storage layer itself; choose another name.`,
  })
}

/**
 * The file of `key` below `root`. Keys are checked (no '.', '..' or empty segment, no backslash, no
 * leading '/') and root is canonical, so the plain concatenation is exactly what path.join makes,
 * without its normalising pass over the whole path (a visible share of a listing's allocations).
 */
export function keyPath(root: string, key: string): string {
  return root.endsWith('/') ? `${root}${key}` : `${root}/${key}`
}

/**
 * What walk(root, key) answers, without a thread-pool round trip per component. root is canonical
 * and keys have no '.', '..' or empty segments, so realpath of the parent folder equals its literal
 * path exactly when no component above the final one is a symlink and all of them are folders; the
 * final component then gets its own lstat, as in walk. Any other outcome (a missing or file
 * component, a symlink, any error) is settled by walk itself, so answers and errors are walk's.
 *
 * Both calls are synchronous: metadata of a local folder is answered from the kernel's caches in
 * microseconds, while each asynchronous call is a thread-pool hop that under load cost more than
 * the rest of a small read_file together (a --cpu-prof on 2 cores). The data itself is read
 * asynchronously.
 */
export async function inspect(root: string, key: string): Promise<BigIntStats | null> {
  const slash = key.lastIndexOf('/')
  if (slash !== -1) {
    const parent = keyPath(root, key.slice(0, slash))
    if (realpathOrNull(parent) !== parent) return walk(root, key)
  }
  let stats: BigIntStats | null
  try {
    stats = lstatSync(keyPath(root, key), { bigint: true, throwIfNoEntry: false }) ?? null
  } catch (error) {
    if (!hasCode(error, 'ENOENT', 'ENOTDIR')) throw error
    stats = null
  }
  if (stats?.isSymbolicLink()) throw symlinkError()
  return stats
}

export function realpathOrNull(path: string): string | null {
  try {
    return realpathSync.native(path)
  } catch {
    return null
  }
}

/**
 * lstat each component of key below root. Returns the final component's stats, or null when some
 * component is missing or is a file where a folder would have to be. A symlink anywhere throws.
 */
async function walk(root: string, key: string): Promise<BigIntStats | null> {
  const segments = key.split('/')
  let path = root
  for (const [index, segment] of segments.entries()) {
    path = join(path, segment)
    const stats = await lstatOrNull(path)
    if (!stats) return null
    if (stats.isSymbolicLink()) throw symlinkError()
    if (index === segments.length - 1) return stats
    if (!stats.isDirectory()) return null
  }
  return null
}

export async function lstatOrNull(path: string): Promise<BigIntStats | null> {
  try {
    return await lstat(path, { bigint: true })
  } catch (error) {
    if (hasCode(error, 'ENOENT', 'ENOTDIR')) return null
    throw error
  }
}

export async function isPlainFolder(root: string, folderKey: string): Promise<boolean> {
  // As in inspect: a realpath equal to the literal path proves every component a real folder but
  // the last, with no symlink; one synchronous lstat says whether the last is a folder too.
  const path = keyPath(root, folderKey)
  if (realpathOrNull(path) === path) return lstatSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false
  try {
    return (await walk(root, folderKey))?.isDirectory() ?? false
  } catch (error) {
    // Listing treats a symlinked folder as absent instead of failing: it simply holds no objects.
    if (error instanceof ToolError) return false
    throw error
  }
}
