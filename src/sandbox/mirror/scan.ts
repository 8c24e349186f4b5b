import type { BigIntStats } from 'node:fs'
import { lstat } from 'node:fs/promises'
import { normalizeWorkspacePath } from '../../core/paths'
import { hasCode, walkHandles } from './handles'
import { removeTree } from './tree'

/**
 * Walking a mirror folder that an untrusted sandbox has written to. Everything is lstat'ed and no
 * symbolic link is ever followed. Paths are handled as bytes because the sandbox can create names
 * that are not valid UTF-8; those must still be found (and removed), even though they can never be
 * workspace paths. Folders are read through handles relative to their parent (handles.ts), so a
 * tree nested past PATH_MAX is walked and removed like any other.
 */
export type EntryKind = 'file' | 'directory' | 'symlink' | 'other'

export interface LocalEntry {
  /** Workspace-relative, '/'-separated; undecodable bytes show as U+FFFD. */
  path: string
  /**
   * Absolute location as bytes, exact even when the name is not valid UTF-8. Short enough for the
   * system calls only for allowed entries (a workspace path has at most 768 bytes); use remove() for others.
   */
  location: Buffer
  /** True when every name on the way is valid UTF-8 and the path is a canonical workspace path. */
  allowed: boolean
  kind: EntryKind
  stats: BigIntStats
  /** Removes the entry (a whole tree for a folder) at any depth; only during its visit. */
  remove(): Promise<void>
}

/** Returning true from visit descends into a directory, 'stop' ends the walk; never called for the root itself. */
export type Visitor = (entry: LocalEntry) => boolean | 'stop' | Promise<boolean | 'stop'>

export interface WalkOptions {
  /**
   * Paths already proven to be workspace paths (the manifest's keys): they skip isWorkspacePath,
   * which costs more than the lstat itself on a large tree.
   */
  trusted?: { has(path: string): boolean }
}

const separator = Buffer.from('/')
const strictUtf8 = new TextDecoder('utf-8', { fatal: true })
const lossyUtf8 = new TextDecoder('utf-8')

export function isWorkspacePath(path: string): boolean {
  try {
    return normalizeWorkspacePath(path) === path
  } catch {
    return false
  }
}

/**
 * Depth first, parents before children, names in byte order within a folder (for stable reports). A
 * visitor descends only into allowed folders in practice, so the paths built here stay short.
 */
export async function walkTree(root: string, visit: Visitor, options: WalkOptions = {}): Promise<void> {
  const rootLocation = Buffer.from(root)
  type Folder = { path: string; location: Buffer; allowed: boolean }
  const rootFolder: Folder = { path: '', location: rootLocation, allowed: true }
  // The folder entered last at each depth: walkHandles goes depth first, so an entry's folder is the
  // one entered last at the depth above it, decoded and checked once when it was entered.
  const folders: Folder[] = []
  await walkHandles(
    rootLocation,
    {
      enter(handle) {
        const depth = handle.parents.length
        const folder = depth === 0 ? rootFolder : (folders[depth - 1] as Folder)
        const decoded = decodeName(handle.name)
        const path = folder.path === '' ? decoded.text : `${folder.path}/${decoded.text}`
        const allowed =
          folder.allowed && decoded.exact && (options.trusted?.has(path) === true || isWorkspacePath(path))
        const location = Buffer.concat([folder.location, separator, handle.name])
        if (handle.stats.isDirectory()) folders[depth] = { path, location, allowed }
        const at = handle.at
        return visit({
          path,
          location,
          allowed,
          kind: kindOf(handle.stats),
          stats: handle.stats,
          remove: () => removeTree(at),
        })
      },
    },
    // Walks run only once no sandboxed process is left: a folder it locked may be opened up.
    { unlock: true },
  )
}

/** A file name as text; exact is false when it is not valid UTF-8 (the text is then lossy). */
export function decodeName(name: Buffer): { text: string; exact: boolean } {
  try {
    return { text: strictUtf8.decode(name), exact: true }
  } catch {
    return { text: lossyUtf8.decode(name), exact: false }
  }
}

export function kindOf(stats: BigIntStats): EntryKind {
  if (stats.isSymbolicLink()) return 'symlink'
  if (stats.isDirectory()) return 'directory'
  if (stats.isFile()) return 'file'
  return 'other'
}

export async function lstatOrNull(path: string | Buffer): Promise<BigIntStats | null> {
  try {
    return await lstat(path, { bigint: true })
  } catch (error) {
    if (hasCode(error, 'ENOENT', 'ENOTDIR')) return null
    throw error
  }
}
