import type { BigIntStats } from 'node:fs'
import type { EntryKind } from './scan'

/**
 * What a run over an overlay left, worked out from the layers without walking the copy: the copy
 * (lower) is what the manifest lists, the upper layer holds exactly what the run wrote, and for a
 * folder of both layers its merged listing (overlay.ts) tells whether it merges with lower or hides it
 * (removed and made again). Pure bookkeeping, so every case can be tested without a mount.
 */
export interface UpperEntry {
  path: string
  kind: EntryKind | 'whiteout'
  stats: BigIntStats
}

/** How a folder of the copy shows in the merged view. */
type FolderView = 'as-is' | 'listed' | 'hidden'

export interface MergedView {
  /** Files of the copy still visible, untouched (their manifest entries stay true). */
  keptFiles: string[]
  /** Files of the copy no longer visible as they were: deleted, replaced, or hidden by a folder made again. */
  goneFiles: string[]
  /** Folders of the copy visible untouched (no upper entry at or below them). */
  keptFolders: string[]
  /** Folders of both layers whose merged listing was needed and not given. */
  unlisted: string[]
}

export function parentOf(path: string): string {
  const slash = path.lastIndexOf('/')
  return slash === -1 ? '' : path.slice(0, slash)
}

function nameOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1)
}

/** Every folder a stored file lies in, at any depth ('' excluded). */
export function foldersOf(files: Iterable<string>): Set<string> {
  const folders = new Set<string>()
  for (const path of files) {
    for (let slash = path.indexOf('/'); slash !== -1; slash = path.indexOf('/', slash + 1)) {
      folders.add(path.slice(0, slash))
    }
  }
  return folders
}

/** Folders of the copy that the upper layer also holds as folders: the ones whose merged listing decides. */
export function foldersToList(upper: ReadonlyMap<string, UpperEntry>, lowerFolders: ReadonlySet<string>): string[] {
  const folders: string[] = []
  for (const [path, entry] of upper) if (entry.kind === 'directory' && lowerFolders.has(path)) folders.push(path)
  return folders
}

/**
 * lowerFiles: the manifest's paths; upper: every upper entry by workspace path (whiteouts included);
 * listings: folder → names in the merged view (strictly decoded; others cannot be lower names).
 */
export function mergedView(
  lowerFiles: Iterable<string>,
  lowerFolders: ReadonlySet<string>,
  upper: ReadonlyMap<string, UpperEntry>,
  listings: ReadonlyMap<string, ReadonlySet<string>>,
): MergedView {
  const views = new Map<string, FolderView>()
  const unlisted = new Set<string>()

  /** How the entry at path, a lower entry whose parent shows as `parent`, shows itself. */
  const childView = (path: string, parent: FolderView | 'root'): 'as-is' | 'upper' | 'hidden' => {
    if (parent === 'hidden') return 'hidden'
    if (parent === 'as-is') return 'as-is'
    if (parent === 'listed') {
      const listing = listings.get(parentOf(path))
      if (!listing) unlisted.add(parentOf(path))
      else if (!listing.has(nameOf(path))) return 'hidden'
    }
    return upper.has(path) ? 'upper' : 'as-is'
  }

  const folderView = (folder: string): FolderView => {
    const known = views.get(folder)
    if (known) return known
    const parent = parentOf(folder)
    const view = childView(folder, parent === '' ? 'root' : folderView(parent))
    // A folder of both layers: its listing says what shows; anything else in upper (a whiteout, a file) hides it.
    const result: FolderView = view === 'upper' ? (upper.get(folder)?.kind === 'directory' ? 'listed' : 'hidden') : view
    views.set(folder, result)
    return result
  }

  const keptFiles: string[] = []
  const goneFiles: string[] = []
  for (const path of lowerFiles) {
    const parent = parentOf(path)
    const view = childView(path, parent === '' ? 'root' : folderView(parent))
    if (view === 'as-is') keptFiles.push(path)
    else goneFiles.push(path)
  }
  const keptFolders = [...lowerFolders].filter((folder) => folderView(folder) === 'as-is')
  return { keptFiles, goneFiles, keptFolders, unlisted: [...unlisted] }
}
