import { randomUUID } from 'node:crypto'
import type { BigIntStats } from 'node:fs'
import { lstat, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { hasCode } from './handles'
import { isWorkspacePath } from './scan'

/**
 * What the mirror knows about each materialized file: the storage version it holds (etag) and the
 * local stat fingerprint taken when it was written. A file whose fingerprint still matches has not
 * been touched since, so it can be trusted without reading it. Bigint stats are kept as strings
 * because nanosecond times and inode numbers overflow a JSON number.
 */
export interface ManifestEntry {
  etag: string
  size: string
  mtimeNs: string
  ctimeNs: string
  ino: string
}

/** Workspace-relative path → entry. */
export type Manifest = Map<string, ManifestEntry>

interface ManifestFile {
  version: 1
  prefix: string
  files: Record<string, ManifestEntry>
}

export function entryOf(etag: string, stats: BigIntStats): ManifestEntry {
  return {
    etag,
    size: stats.size.toString(),
    mtimeNs: stats.mtimeNs.toString(),
    ctimeNs: stats.ctimeNs.toString(),
    ino: stats.ino.toString(),
  }
}

/** ctime is included because no process can set it back: an edit that restores size and mtime still shows. */
export function fingerprintMatches(entry: ManifestEntry, stats: BigIntStats): boolean {
  return (
    entry.size === stats.size.toString() &&
    entry.mtimeNs === stats.mtimeNs.toString() &&
    entry.ctimeNs === stats.ctimeNs.toString() &&
    entry.ino === stats.ino.toString()
  )
}

/**
 * Keeps each workspace's manifest in memory between runs, so an unchanged workspace costs neither a
 * JSON parse nor a write per call. The copy in memory is used only while manifest.json is still the
 * very file this cache last read or wrote (same inode, size and times: every save renames a new
 * file into place); anything else, such as a restart or someone editing the file, reads it again.
 * The copy is the truth about the mirror folder even when a save failed, so it never needs the disk.
 */
export interface ManifestCache {
  load(path: string, prefix: string): Promise<Manifest>
  /** Writes manifest (the object load returned) only when it differs from what is on disk. */
  save(path: string, prefix: string, manifest: Manifest): Promise<void>
}

interface Cached {
  prefix: string
  manifest: Manifest
  /** manifest.json's identity when last read or written; null when there was none. */
  identity: string | null
  /** The entries on disk (shared objects, compared by reference); undefined when the file is unusable. */
  persisted: Manifest | undefined
}

export function createManifestCache(capacity: number): ManifestCache {
  // In insertion order, refreshed on use: the first key is the least recently used.
  const cache = new Map<string, Cached>()

  function remember(path: string, cached: Cached): void {
    cache.delete(path)
    cache.set(path, cached)
    for (const stale of cache.keys()) {
      if (cache.size <= capacity) break
      cache.delete(stale)
    }
  }

  return {
    async load(path, prefix) {
      const identity = await identityOf(path)
      const cached = cache.get(path)
      if (cached && cached.prefix === prefix && cached.identity === identity) {
        remember(path, cached)
        return cached.manifest
      }
      const read = await readManifest(path, prefix)
      remember(path, {
        prefix,
        manifest: read.manifest,
        identity,
        persisted: read.usable ? new Map(read.manifest) : undefined,
      })
      return read.manifest
    },

    async save(path, prefix, manifest) {
      const cached = cache.get(path)
      const current = cached?.manifest === manifest && cached.prefix === prefix ? cached : undefined
      if (current?.persisted && sameEntries(current.persisted, manifest)) return
      await writeManifest(path, prefix, manifest)
      remember(path, { prefix, manifest, identity: await identityOf(path), persisted: new Map(manifest) })
    },
  }
}

/** Changed entries are replaced, never mutated, so comparing references finds every change. */
function sameEntries(left: Manifest, right: Manifest): boolean {
  if (left.size !== right.size) return false
  for (const [path, entry] of right) if (left.get(path) !== entry) return false
  return true
}

async function identityOf(path: string): Promise<string | null> {
  try {
    const stats = await lstat(path, { bigint: true })
    return `${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`
  } catch (error) {
    if (hasCode(error, 'ENOENT', 'ENOTDIR')) return null
    throw error
  }
}

/**
 * A missing, unreadable or malformed manifest (or one written for another prefix) yields an empty
 * manifest: every local file is then unknown and gets replaced from storage, which is always safe.
 * Only a well-formed one is usable as is; anything else is rewritten at the next save.
 */
async function readManifest(path: string, prefix: string): Promise<{ manifest: Manifest; usable: boolean }> {
  const unusable = { manifest: new Map(), usable: false }
  let parsed: unknown
  try {
    parsed = JSON.parse(await readFile(path, 'utf8'))
  } catch {
    return unusable
  }
  if (!isManifestFile(parsed) || parsed.prefix !== prefix) return unusable
  const manifest: Manifest = new Map()
  for (const [filePath, entry] of Object.entries(parsed.files)) {
    if (!isEntry(entry) || !isWorkspacePath(filePath)) return unusable
    manifest.set(filePath, entry)
  }
  return { manifest, usable: true }
}

/** Written to a temp file and renamed, so a crash leaves the old manifest or the new one, never half of one. */
async function writeManifest(path: string, prefix: string, manifest: Manifest): Promise<void> {
  const content: ManifestFile = { version: 1, prefix, files: Object.fromEntries(manifest) }
  const temp = `${path}.${randomUUID()}.tmp`
  try {
    await writeFile(temp, JSON.stringify(content), { mode: 0o600, flag: 'wx' })
    await rename(temp, path)
  } catch (error) {
    await rm(temp, { force: true }).catch(() => {})
    throw error
  }
}

function isManifestFile(value: unknown): value is ManifestFile {
  if (typeof value !== 'object' || value === null) return false
  const candidate = value as Partial<ManifestFile>
  return (
    candidate.version === 1 &&
    typeof candidate.prefix === 'string' &&
    typeof candidate.files === 'object' &&
    candidate.files !== null &&
    !Array.isArray(candidate.files)
  )
}

const entryFields = ['etag', 'size', 'mtimeNs', 'ctimeNs', 'ino'] as const

function isEntry(value: unknown): value is ManifestEntry {
  if (typeof value !== 'object' || value === null) return false
  const record = value as Record<string, unknown>
  return entryFields.every((field) => typeof record[field] === 'string')
}
