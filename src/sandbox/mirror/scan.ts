import { type BigIntStats, lstatSync, readdirSync } from 'node:fs'
import { chmod, lstat, readdir, rm } from 'node:fs/promises'
import { normalizeWorkspacePath } from '../../core/paths'
import { timeSlices } from '../../storage/time-slices'

/**
 * Walking a mirror folder that an untrusted sandbox has written to. Everything is lstat'ed and no
 * symbolic link is ever followed. Paths are handled as bytes because the sandbox can create names
 * that are not valid UTF-8; those must still be found (and removed), even though they can never be
 * workspace paths.
 */
export type EntryKind = 'file' | 'directory' | 'symlink' | 'other'

export interface LocalEntry {
  /** Workspace-relative, '/'-separated; undecodable bytes show as U+FFFD. */
  path: string
  /** Absolute location as bytes, exact even when the name is not valid UTF-8. */
  location: Buffer
  /** True when every name on the way is valid UTF-8 and the path is a canonical workspace path. */
  allowed: boolean
  kind: EntryKind
  stats: BigIntStats
}

/** Returning true from visit descends into a directory; it is never called for the root itself. */
export type Visitor = (entry: LocalEntry) => boolean | Promise<boolean>

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

/** Depth first, parents before children, names in byte order within a folder (for stable reports). */
export async function walkTree(root: string, visit: Visitor, options: WalkOptions = {}): Promise<void> {
  // The mirror is a local folder: read synchronously, in time slices (see timeSlices).
  await walkFolder(Buffer.from(root), '', true, visit, options, timeSlices())
}

async function walkFolder(
  folder: Buffer,
  folderPath: string,
  allowed: boolean,
  visit: Visitor,
  options: WalkOptions,
  slices: ReturnType<typeof timeSlices>,
): Promise<void> {
  const names = readdirSync(folder, { encoding: 'buffer' }).sort(Buffer.compare)
  const entries: LocalEntry[] = []
  for (const name of names) {
    await slices.pause()
    const location = Buffer.concat([folder, separator, name])
    const stats = lstatSyncOrNull(location)
    // Removed by someone else since readdir: nothing left to judge.
    if (!stats) continue
    const decoded = decodeName(name)
    const path = folderPath === '' ? decoded.text : `${folderPath}/${decoded.text}`
    const entryAllowed = allowed && decoded.exact && (options.trusted?.has(path) === true || isWorkspacePath(path))
    entries.push({ path, location, allowed: entryAllowed, kind: kindOf(stats), stats })
  }
  for (const entry of entries) {
    if ((await visit(entry)) && entry.kind === 'directory') {
      await walkFolder(entry.location, entry.path, entry.allowed, visit, options, slices)
    }
  }
}

function lstatSyncOrNull(location: Buffer): BigIntStats | null {
  try {
    return lstatSync(location, { bigint: true })
  } catch (error) {
    if (hasCode(error, 'ENOENT', 'ENOTDIR')) return null
    throw error
  }
}

function decodeName(name: Buffer): { text: string; exact: boolean } {
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

/**
 * Removes a file, link, special file or whole tree. rm never follows links. Without root the sandbox
 * can lock us out by taking write permission off its own folders, so on EACCES the tree's folders
 * are opened up and the removal is tried once more.
 */
export async function removeEntry(location: string | Buffer): Promise<void> {
  try {
    await rm(location, { recursive: true, force: true })
  } catch (error) {
    if (!hasCode(error, 'EACCES', 'EPERM')) throw error
    await openUpFolders(location)
    await rm(location, { recursive: true, force: true })
  }
}

async function openUpFolders(location: string | Buffer): Promise<void> {
  const stats = await lstatOrNull(location)
  if (!stats?.isDirectory()) return
  await chmod(location, 0o700)
  const base = Buffer.from(location)
  for (const name of await readdir(base, { encoding: 'buffer' })) {
    await openUpFolders(Buffer.concat([base, separator, name]))
  }
}

export function hasCode(error: unknown, ...codes: string[]): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && codes.includes(code)
}
