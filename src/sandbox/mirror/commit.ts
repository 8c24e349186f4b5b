import type { BigIntStats } from 'node:fs'
import { constants } from 'node:fs'
import { type FileHandle, open } from 'node:fs/promises'
import { ToolError } from '../../core/errors'
import { isPreconditionFailed, type ObjectStore } from '../../storage/store'
import { workspaceLimitPassed } from '../executors/disk-usage'
import { isOwnedBy, isReadyFolder, type Owner } from './checkout'
import { hasCode } from './handles'
import { entryOf, fingerprintMatches, type Manifest, type ManifestEntry } from './manifest'
import { runPool } from './pool'
import { type LocalEntry, walkTree } from './scan'
import { measureTree, type TreeUsage } from './tree'
import type { FileChange, SkippedFile, SyncResult } from './types'

/**
 * Commit writes what the sandbox changed back to storage. Only regular files are ever read; links
 * are reported and left alone, so nothing outside the mirror can be smuggled into storage. Storage
 * wins every conflict: a change someone else made during the run is never overwritten.
 */
export interface CommitInput {
  storage: ObjectStore
  prefix: string
  files: string
  /** Updated in place as each change lands, so a failure midway records exactly what reached storage. */
  manifest: Manifest
  maxFileBytes: number
  /** Who materialized files and folders belong to (checkout.ts); undefined: the service itself. */
  owner?: Owner | undefined
  /**
   * The workspace limits, counted in the same walk over the whole copy (at any depth, links and names
   * that are never synced included): past one, nothing is written and the outcome names the limit.
   */
  limits?: { bytes: number; entries: number } | undefined
}

export interface CommitOutcome extends SyncResult {
  /** Set when the copy is past a limit: then nothing was written and changes and skipped are empty. */
  passed?: string
  /**
   * True when the copy now holds exactly what storage holds (as a checkout would leave it): nothing was
   * skipped, and every folder is one a stored file needs, with the mode and owner a checkout gives it.
   */
  exact: boolean
}

interface Upload {
  path: string
  location: Buffer
  known: ManifestEntry | undefined
}

export const skipReasons = {
  symlink: 'symbolic link (not followed)',
  notRegular: 'not a regular file',
  notAllowed: 'name not allowed in a workspace',
  changedInStorage: 'changed in storage during the run; storage version kept',
  createdInStorage: 'created in storage during the run; storage version kept',
  deletedInStorage: 'deleted in storage during the run; not restored',
  unreadable: 'not readable',
  vanished: 'removed during the commit',
  overQuota: 'over the tenant storage quota; not saved',
  tooLarge: (limit: number) => `larger than ${limit} bytes`,
}

export const storageConcurrency = 8
// O_NONBLOCK: a FIFO swapped in after the scan must not make open wait for a writer forever.
const readFlags = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK

export async function commitChanges(input: CommitInput): Promise<CommitOutcome> {
  const { storage, prefix, files, manifest, maxFileBytes, owner, limits } = input
  const changes: FileChange[] = []
  const skipped: SkippedFile[] = []
  const present = new Set<string>()
  const uploads: Upload[] = []
  const folders: string[] = []
  // A checkout would change something here (a folder's mode, a file's owner): the copy is not exact.
  let reshaped = false
  const skip = (path: string, reason: string): void => {
    skipped.push({ path, reason })
  }

  const usage: TreeUsage = { bytes: 0, entries: 0 }
  const maxEntries = limits?.entries ?? Number.POSITIVE_INFINITY

  /** Counts the entry (and, for a folder the sync does not enter, everything below it), then sorts it. */
  const visit = (entry: LocalEntry): boolean | 'stop' | Promise<boolean | 'stop'> => {
    usage.entries++
    if (entry.kind === 'file') usage.bytes += Number(entry.stats.size)
    // Only a folder whose parent is allowed is ever visited, so its location is short enough for measureTree.
    if (limits && entry.kind === 'directory' && !entry.allowed) {
      return measureTree(entry.location, maxEntries - usage.entries + 1, { unlock: true }).then((below) => {
        usage.entries += below.entries
        usage.bytes += below.bytes
        return usage.entries > maxEntries ? 'stop' : sort(entry)
      })
    }
    return usage.entries > maxEntries ? 'stop' : sort(entry)
  }

  const sort = (entry: LocalEntry): boolean => {
    if (!entry.allowed) {
      skip(entry.path, skipReasons.notAllowed)
      return false
    }
    if (entry.kind === 'directory') {
      folders.push(entry.path)
      if (!isReadyFolder(entry.stats, owner)) reshaped = true
      return true
    }
    if (entry.kind === 'symlink') skip(entry.path, skipReasons.symlink)
    if (entry.kind === 'other') skip(entry.path, skipReasons.notRegular)
    if (entry.kind !== 'file') return false
    present.add(entry.path)
    if (!isOwnedBy(entry.stats, owner)) reshaped = true
    const known = manifest.get(entry.path)
    if (known && fingerprintMatches(known, entry.stats)) return false
    // Reported but never deleted: the version already in storage stays.
    if (entry.stats.size > BigInt(maxFileBytes)) skip(entry.path, skipReasons.tooLarge(maxFileBytes))
    else uploads.push({ path: entry.path, location: entry.location, known })
    return false
  }
  await walkTree(files, visit, { trusted: manifest })
  const passed = limits && workspaceLimitPassed(usage, limits.bytes, limits.entries)
  if (passed) return { changes: [], skipped: [], exact: false, passed }

  const deletions = [...manifest].filter(([path]) => !present.has(path))
  await runPool(deletions, storageConcurrency, async ([path, known]) => {
    const deleted = await deleteRemoved(storage, prefix + path, known)
    // The local file is gone either way, so the manifest must stop vouching for it.
    manifest.delete(path)
    if (!deleted) return skip(path, skipReasons.changedInStorage)
    changes.push({ path, change: 'deleted' })
  })

  // After the deletions: a file replacing a deleted folder (or the reverse) needs the old keys gone first.
  await runPool(uploads, storageConcurrency, async ({ path, location, known }) => {
    const uploaded = await uploadChanged(storage, prefix + path, known, location, maxFileBytes)
    if ('reason' in uploaded) return skip(path, uploaded.reason)
    manifest.set(path, entryOf(uploaded.etag, uploaded.stats))
    changes.push({ path, change: known ? 'modified' : 'added', size: uploaded.size })
  })

  return {
    changes: changes.sort(byPath),
    skipped: skipped.sort(byPath),
    exact: !reshaped && skipped.length === 0 && folders.every(neededBy(manifest)),
  }
}

/** A folder of the copy that no stored file lies in is one a checkout would remove (storage has no folders). */
function neededBy(manifest: Manifest): (folder: string) => boolean {
  const needed = new Set<string>()
  for (const path of manifest.keys()) {
    for (let slash = path.indexOf('/'); slash !== -1; slash = path.indexOf('/', slash + 1)) {
      needed.add(path.slice(0, slash))
    }
  }
  return (folder) => needed.has(folder)
}

function conflictOf(known: ManifestEntry | undefined, currentEtag: string | undefined): string | undefined {
  if (!known) return currentEtag === undefined ? undefined : skipReasons.createdInStorage
  if (currentEtag === undefined) return skipReasons.deletedInStorage
  return currentEtag === known.etag ? undefined : skipReasons.changedInStorage
}

type ReadResult = { bytes: Uint8Array; stats: BigIntStats } | { reason: string }

/**
 * Deletes the stored version of a file the run removed, unless someone changed it in storage during the
 * run (storage wins): false then, and the stored file stays. One conditional delete (If-Match on the
 * etag checked out), so a version written after any check of ours is never the one deleted.
 */
export async function deleteRemoved(storage: ObjectStore, key: string, known: ManifestEntry): Promise<boolean> {
  try {
    await storage.delete(key, { ifMatch: known.etag })
    return true
  } catch (error) {
    if (isPreconditionFailed(error)) return false
    throw error
  }
}

/**
 * Uploads a file the run wrote, unless storage changed it during the run: what was stored, or why the
 * file was skipped. A driver conflict (say, an object where a folder is needed) concerns this file only;
 * so does the tenant quota (TOOLPORT_TENANT_QUOTA_BYTES): the file is skipped with a note, the run still
 * succeeds.
 */
export async function uploadChanged(
  storage: ObjectStore,
  key: string,
  known: ManifestEntry | undefined,
  location: Buffer,
  maxFileBytes: number,
): Promise<{ etag: string; stats: BigIntStats; size: number } | { reason: string }> {
  const read = await readRegularFile(location, maxFileBytes)
  if ('reason' in read) return read
  // If-Match on the etag the run started from (If-None-Match for a file new to storage): a version
  // another writer stored during the run fails the condition and stays, whatever the timing.
  const condition = known ? { ifMatch: known.etag } : { ifNoneMatch: '*' as const }
  try {
    const stored = await storage.put(key, read.bytes, condition)
    return { etag: stored.etag, stats: read.stats, size: read.bytes.byteLength }
  } catch (error) {
    if (isPreconditionFailed(error))
      return { reason: conflictOf(known, (await storage.head(key))?.etag) ?? skipReasons.changedInStorage }
    if (error instanceof ToolError && error.code === 'conflict') return { reason: error.message }
    if (error instanceof ToolError && error.code === 'size_exceeded') {
      return { reason: `${skipReasons.overQuota}: ${error.message}` }
    }
    throw error
  }
}

/** Opens without following links and trusts fstat, not the earlier scan: the file may have been swapped. */
async function readRegularFile(location: Buffer, maxBytes: number): Promise<ReadResult> {
  let handle: FileHandle
  try {
    handle = await open(location, readFlags)
  } catch (error) {
    if (hasCode(error, 'ELOOP')) return { reason: skipReasons.symlink }
    if (hasCode(error, 'ENXIO')) return { reason: skipReasons.notRegular }
    if (hasCode(error, 'ENOENT', 'ENOTDIR')) return { reason: skipReasons.vanished }
    if (hasCode(error, 'EACCES', 'EPERM')) return { reason: skipReasons.unreadable }
    throw error
  }
  try {
    const stats = await handle.stat({ bigint: true })
    if (!stats.isFile()) return { reason: skipReasons.notRegular }
    if (stats.size > BigInt(maxBytes)) return { reason: skipReasons.tooLarge(maxBytes) }
    const bytes = await readAtMost(handle, Number(stats.size), maxBytes)
    return bytes ? { bytes, stats } : { reason: skipReasons.tooLarge(maxBytes) }
  } finally {
    await handle.close()
  }
}

/** Reads to the end, or returns null once more than maxBytes turn up (the file grew after fstat). */
async function readAtMost(handle: FileHandle, expected: number, maxBytes: number): Promise<Uint8Array | null> {
  let buffer = Buffer.alloc(Math.min(expected, maxBytes) + 1)
  let length = 0
  for (;;) {
    if (length === buffer.byteLength) {
      if (length > maxBytes) return null
      const bigger = Buffer.alloc(Math.min(buffer.byteLength * 2, maxBytes + 1))
      buffer.copy(bigger)
      buffer = bigger
    }
    const { bytesRead } = await handle.read(buffer, length, buffer.byteLength - length, length)
    if (bytesRead === 0) return buffer.subarray(0, length)
    length += bytesRead
  }
}

export function byPath(left: { path: string }, right: { path: string }): number {
  if (left.path === right.path) return 0
  return left.path < right.path ? -1 : 1
}
