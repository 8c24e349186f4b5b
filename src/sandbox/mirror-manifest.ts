import { randomUUID } from 'node:crypto'
import type { BigIntStats } from 'node:fs'
import { readFile, rename, rm, writeFile } from 'node:fs/promises'
import { isWorkspacePath } from './mirror-scan'

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
 * A missing, unreadable or malformed manifest (or one written for another prefix) yields an empty
 * manifest: every local file is then unknown and gets replaced from storage, which is always safe.
 */
export async function loadManifest(path: string, prefix: string): Promise<Manifest> {
  let parsed: unknown
  try {
    parsed = JSON.parse(await readFile(path, 'utf8'))
  } catch {
    return new Map()
  }
  if (!isManifestFile(parsed) || parsed.prefix !== prefix) return new Map()
  const manifest: Manifest = new Map()
  for (const [filePath, entry] of Object.entries(parsed.files)) {
    if (!isEntry(entry) || !isWorkspacePath(filePath)) return new Map()
    manifest.set(filePath, entry)
  }
  return manifest
}

/** Written to a temp file and renamed, so a crash leaves the old manifest or the new one, never half of one. */
export async function saveManifest(path: string, prefix: string, manifest: Manifest): Promise<void> {
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
