import { randomUUID } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { onFirstUse } from '../../core/first-use'
import { changeMarkerKey, markWorkspaceChanged } from '../../storage/change-markers'
import type { ObjectStore } from '../../storage/store'
import { hasCode } from './handles'
import type { Manifest } from './manifest'
import type { SkippedFile } from './types'

/**
 * Whether a checkout may skip both the storage listing and the walk of the copy: storage unchanged
 * since the last listing (this instance's change marker is still there, storage/change-markers.ts),
 * that listing younger than the reconciliation period, and the copy left exactly as storage holds it
 * by the last checkout or commit. Everything is in memory and tied to the manifest object the cache
 * hands out, so a restart, an evicted or re-read manifest, or a failed sync all mean a full sync.
 */
export interface FreshnessOptions {
  /** A full listing at least this often, for writers of the bucket that delete no marker; 0: always. */
  reconcileMs: number
  /** Clock for the period (tests); default Date.now. */
  now?: () => number
}

export interface Freshness {
  /** The skip notes of the last listing when the copy may be used as it is; undefined: sync in full. */
  unchanged(storage: ObjectStore, prefix: string, manifest: Manifest): Promise<SkippedFile[] | undefined>
  /** Call right before a full listing: writes this instance's marker, and forgets what was trusted. */
  beforeListing(storage: ObjectStore, prefix: string, manifest: Manifest): Promise<Listing>
  /** The copy now equals what that listing found (less `skipped`). */
  listed(manifest: Manifest, listing: Listing, skipped: SkippedFile[]): void
  /** The copy is being changed (a run starts, a commit or discard is under way): not trusted until settled. */
  unsettled(manifest: Manifest): void
  /** A commit left the copy exactly as storage holds it (nothing skipped, no stray folder). */
  settled(manifest: Manifest): void
  /** After this instance changed the workspace: every other reader lists again, this one keeps its marker. */
  changed(storage: ObjectStore, prefix: string): Promise<void>
}

export interface Listing {
  markerEtag: string
  listedAt: number
}

interface Trusted extends Listing {
  skipped: SkippedFile[]
  settled: boolean
}

/** The instance's reader id lives in the mirrors root, so a restart reuses its markers instead of leaving new ones. */
const readerFile = 'reader-id'

export function createFreshness(root: string, options: FreshnessOptions): Freshness {
  const now = options.now ?? Date.now
  const trusted = new WeakMap<Manifest, Trusted>()
  // Not kept when it failed: the next checkout tries again.
  const reader = onFirstUse(() => readerId(root))
  const markerOf = async (prefix: string) => changeMarkerKey(prefix, await reader())

  return {
    async unchanged(storage, prefix, manifest) {
      const state = trusted.get(manifest)
      if (!state?.settled || options.reconcileMs <= 0 || now() - state.listedAt >= options.reconcileMs) return
      const marker = await storage.head(await markerOf(prefix))
      return marker?.etag === state.markerEtag ? state.skipped : undefined
    },
    async beforeListing(storage, prefix, manifest) {
      trusted.delete(manifest)
      const listedAt = now()
      const written = await storage.put(await markerOf(prefix), `${new Date().toISOString()} ${randomUUID()}`)
      return { markerEtag: written.etag, listedAt }
    },
    listed(manifest, listing, skipped) {
      trusted.set(manifest, { ...listing, skipped, settled: true })
    },
    unsettled(manifest) {
      const state = trusted.get(manifest)
      if (state) state.settled = false
    },
    settled(manifest) {
      const state = trusted.get(manifest)
      if (state) state.settled = true
    },
    async changed(storage, prefix) {
      await markWorkspaceChanged(storage, prefix, { keep: await markerOf(prefix) })
    },
  }
}

async function readerId(root: string): Promise<string> {
  const path = join(root, readerFile)
  try {
    const id = (await readFile(path, 'utf8')).trim()
    if (/^[A-Za-z0-9-]{1,64}$/.test(id)) return id
  } catch (error) {
    if (!hasCode(error, 'ENOENT')) throw error
  }
  const id = randomUUID()
  // Rewritten when unusable; the root belongs to this one process (mirror.ts), so nothing races the write.
  await writeFile(path, id, { mode: 0o600 })
  return id
}
