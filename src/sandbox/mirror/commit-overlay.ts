import { lchown, lstat, readdir, rename } from 'node:fs/promises'
import { join } from 'node:path'
import { workspaceLimitPassed } from '../executors/disk-usage'
import type { OverlayLayers, OverlaySupport } from '../executors/sandbox'
import { ensureFolder, isOwnedBy } from './checkout'
import {
  byPath,
  type CommitInput,
  type CommitOutcome,
  deleteRemoved,
  skipReasons,
  storageConcurrency,
  uploadChanged,
} from './commit'
import { entryOf } from './manifest'
import { foldersOf, foldersToList, mergedView, type UpperEntry } from './merged-view'
import { runPool } from './pool'
import { decodeName, type LocalEntry, walkTree } from './scan'
import { measureTree, removeTree, type TreeUsage } from './tree'
import type { FileChange, SkippedFile } from './types'

/**
 * Commit after a run over an overlay (executors/overlay.ts): only the upper layer is walked, since it
 * holds exactly what the run wrote; what the run removed or hid is worked out from the manifest and the
 * merged listings of the folders both layers hold (merged-view.ts). Storage sees the same changes, skips
 * and conflicts as after a walk of the whole copy (commit.ts); then the uploaded files move from upper
 * into the copy, the deleted ones leave it, and both overlay layers are emptied, so the copy is again what
 * storage holds. The same rules hold: only regular files are read, never through a link, and storage
 * wins every conflict.
 */
export interface OverlayCommitInput extends Omit<CommitInput, 'files'> {
  layers: OverlayLayers
  overlays: OverlaySupport
}

interface Upload {
  path: string
  location: Buffer
}

const leftWithUpper = new Set<string>([skipReasons.symlink, skipReasons.notRegular, skipReasons.notAllowed])

export async function commitOverlay(input: OverlayCommitInput): Promise<CommitOutcome> {
  const { storage, prefix, manifest, maxFileBytes, owner, limits, layers } = input
  const skipped: SkippedFile[] = []
  const skip = (path: string, reason: string): void => {
    skipped.push({ path, reason })
  }
  const upper = new Map<string, UpperEntry>()
  const uploads: Upload[] = []
  const usage: TreeUsage = { bytes: 0, entries: 0 }
  const maxEntries = limits?.entries ?? Number.POSITIVE_INFINITY

  const visit = (entry: LocalEntry): boolean | 'stop' | Promise<boolean | 'stop'> => {
    // A whiteout (a character device 0:0) marks a lower entry the run removed: it is not in the workspace.
    const whiteout = entry.kind === 'other' && entry.stats.isCharacterDevice() && entry.stats.rdev === 0n
    if (whiteout) {
      if (entry.allowed) upper.set(entry.path, { path: entry.path, kind: 'whiteout', stats: entry.stats })
      return false
    }
    usage.entries++
    if (entry.kind === 'file') usage.bytes += Number(entry.stats.size)
    if (!entry.allowed) {
      skip(entry.path, skipReasons.notAllowed)
      if (!limits || entry.kind !== 'directory') return usage.entries > maxEntries ? 'stop' : false
      return measureTree(entry.location, maxEntries - usage.entries + 1, { unlock: true }).then((below) => {
        usage.entries += below.entries
        usage.bytes += below.bytes
        return usage.entries > maxEntries ? 'stop' : false
      })
    }
    upper.set(entry.path, { path: entry.path, kind: entry.kind, stats: entry.stats })
    if (entry.kind === 'symlink') skip(entry.path, skipReasons.symlink)
    if (entry.kind === 'other') skip(entry.path, skipReasons.notRegular)
    if (entry.kind === 'file') {
      // Reported but never deleted: the version already in storage stays.
      if (entry.stats.size > BigInt(maxFileBytes)) skip(entry.path, skipReasons.tooLarge(maxFileBytes))
      else uploads.push({ path: entry.path, location: entry.location })
    }
    if (usage.entries > maxEntries) return 'stop'
    return entry.kind === 'directory'
  }
  await walkTree(layers.upper, visit, { trusted: manifest })

  // Nothing written: the copy is the workspace, as storage holds it.
  if (upper.size === 0 && skipped.length === 0) {
    const passed = limits && workspaceLimitPassed(layers.lowerUsage, limits.bytes, limits.entries)
    if (passed) return { changes: [], skipped: [], exact: false, passed }
    await clearLayers(layers, owner)
    return { changes: [], skipped: [], exact: true }
  }

  // What the run wrote alone can pass a limit (the walk stops counting there): nothing more is needed.
  const written = limits && workspaceLimitPassed(usage, limits.bytes, limits.entries)
  if (written) return { changes: [], skipped: [], exact: false, passed: written }

  const lowerFolders = foldersOf(manifest.keys())
  const toList = foldersToList(upper, lowerFolders)
  const listings = new Map<string, Set<string>>()
  if (toList.length > 0) {
    for (const [folder, names] of await input.overlays.list(layers, toList)) {
      const decoded = new Set<string>()
      for (const name of names) {
        // A name that is not UTF-8 is never that of a file of the copy.
        const { text, exact } = decodeName(name)
        if (exact) decoded.add(text)
      }
      listings.set(folder, decoded)
    }
  }
  const view = mergedView(manifest.keys(), lowerFolders, upper, listings)
  if (view.unlisted.length > 0) throw new Error(`the overlay gave no listing of ${view.unlisted.join(', ')}`)

  for (const path of view.keptFiles) {
    usage.bytes += Number(manifest.get(path)?.size ?? 0)
  }
  usage.entries += view.keptFiles.length + view.keptFolders.length
  const passed = limits && workspaceLimitPassed(usage, limits.bytes, limits.entries)
  if (passed) return { changes: [], skipped: [], exact: false, passed }

  const changes: FileChange[] = []
  const uploading = new Set(uploads.map((upload) => upload.path))
  // A file over the size limit keeps its stored version, like a walk of the copy would.
  const large = new Set(skipped.filter((entry) => upper.get(entry.path)?.kind === 'file').map((entry) => entry.path))
  const gone = view.goneFiles.filter((path) => !uploading.has(path) && !large.has(path))
  const removeFromCopy: string[] = []
  await runPool(gone, storageConcurrency, async (path) => {
    const known = manifest.get(path)
    if (!known) return
    const deleted = await deleteRemoved(storage, prefix + path, known)
    removeFromCopy.push(path)
    // The file is gone from the workspace either way, so the manifest must stop vouching for it.
    manifest.delete(path)
    if (!deleted) return skip(path, skipReasons.changedInStorage)
    changes.push({ path, change: 'deleted' })
  })

  // After the deletions: a file replacing a deleted folder (or the reverse) needs the old keys gone first.
  const landed: { path: string; location: Buffer; etag: string }[] = []
  await runPool(uploads, storageConcurrency, async ({ path, location }) => {
    const known = manifest.get(path)
    const uploaded = await uploadChanged(storage, prefix + path, known, location, maxFileBytes)
    if ('reason' in uploaded) return skip(path, uploaded.reason)
    // Until it has moved into the copy, the manifest vouches for no version of it.
    manifest.delete(path)
    landed.push({ path, location, etag: uploaded.etag })
    changes.push({ path, change: known ? 'modified' : 'added', size: uploaded.size })
  })

  await applyToCopy(layers.lower, removeFromCopy, landed, manifest, owner, lowerFolders)
  await clearLayers(layers, owner)
  return {
    changes: changes.sort(byPath),
    skipped: skipped.sort(byPath),
    // What was skipped for its kind or size left with the upper layer, so the copy is what storage holds;
    // a conflict or a failed read leaves a version storage may not hold, and the next checkout lists again.
    exact: skipped.every(
      (entry) => leftWithUpper.has(entry.reason) || entry.reason === skipReasons.tooLarge(maxFileBytes),
    ),
  }
}

/** Brings the copy to what storage now holds: deleted files out, uploaded ones moved in from upper. */
async function applyToCopy(
  lower: string,
  removed: readonly string[],
  landed: readonly { path: string; location: Buffer; etag: string }[],
  manifest: CommitInput['manifest'],
  owner: CommitInput['owner'],
  lowerFolders: ReadonlySet<string>,
): Promise<void> {
  const located = (path: string) => join(lower, ...path.split('/'))
  for (const path of removed) await removeTree(located(path))
  // Folders of the copy no stored file needs any more (deepest first), and any file now in a folder's way.
  const needed = foldersOf(manifest.keys())
  for (const { path } of landed) for (const folder of foldersOf([path])) needed.add(folder)
  for (const folder of [...lowerFolders].sort().reverse()) if (!needed.has(folder)) await removeTree(located(folder))
  for (const { path, location, etag } of landed) {
    const segments = path.split('/')
    for (let depth = 1; depth < segments.length; depth++) {
      await ensureFolder(join(lower, ...segments.slice(0, depth)), owner)
    }
    const target = located(path)
    // A folder of the copy where the file now is (its files were all deleted above).
    await removeTree(target)
    await rename(location, target)
    let stats = await lstat(target, { bigint: true })
    if (owner && !isOwnedBy(stats, owner)) {
      await lchown(target, owner.uid, owner.gid)
      stats = await lstat(target, { bigint: true })
    }
    manifest.set(path, entryOf(etag, stats))
  }
}

/**
 * Empties the upper layer for the next run and gives its root (the workspace root) its mode back;
 * overlayfs empties its work folder itself at each mount.
 */
export async function clearLayers(
  layers: Pick<OverlayLayers, 'upper' | 'work'>,
  owner: CommitInput['owner'],
): Promise<void> {
  if ((await readdir(layers.upper).catch(() => ['?'])).length > 0) await removeTree(layers.upper)
  await ensureFolder(layers.upper, owner)
  await ensureFolder(layers.work, owner)
}
