import { createHash } from 'node:crypto'
import { chmod, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { createKeyedLock } from '../../core/keyed-lock'
import { markWorkspaceChanged } from '../../storage/change-markers'
import type { ObjectStore } from '../../storage/store'
import { overlayablePath } from '../executors/overlay'
import type { OverlayLayers, OverlaySupport } from '../executors/sandbox'
import { ensureFolder, type MirrorLayout, materialize, type Owner } from './checkout'
import { commitChanges } from './commit'
import { clearLayers, commitOverlay } from './commit-overlay'
import { createFreshness, type FreshnessOptions } from './freshness'
import { createManifestCache, type Manifest } from './manifest'
import { foldersOf } from './merged-view'
import { lstatOrNull } from './scan'
import { removeTree } from './tree'
import type { SkippedFile, SyncResult } from './types'

/**
 * "The workspace travels": a local folder mirroring one workspace's objects, bind-mounted into the
 * sandbox at /workspace. checkout() brings it up to date with storage (downloading only what
 * changed), commit() writes back what the run changed, release() lets the next run in.
 *
 * Layout under root, per workspace: <id>/files/ (the mirror the sandbox sees), <id>/manifest.json
 * (beside it, so the sandbox can neither read nor forge it) and <id>/incoming/ (download temp files).
 * One process owns a root: the lock is in memory, not on disk.
 */
export interface MirrorOptions {
  /** Host folder holding all mirrors (created 0o711 if missing). */
  root: string
  /** Files larger than this are not synced back (skipped with a note). */
  maxFileBytes: number
  /** Owner of materialized files and folders, so an unprivileged sandbox user can write them. */
  owner?: { uid: number; gid: number }
  /**
   * Skip the storage listing and the walk of the copy on a checkout while this instance's change marker
   * says storage is unchanged (freshness.ts). Unset: every checkout lists storage and walks the copy.
   */
  changeMarkers?: FreshnessOptions
  /**
   * Runs go over an overlay of the copy (executors/overlay.ts): the commit reads only what a run wrote,
   * instead of walking the whole copy. Unset, and for a run whose copy is empty: the sandbox writes to
   * the copy itself.
   */
  overlays?: OverlaySupport
}

export interface Checkout {
  /** Host path to bind-mount at /workspace (the lower layer when overlay is set). */
  dir: string
  /** The layers the run goes over (MirrorOptions.overlays); unset: over dir itself. */
  overlay?: OverlayLayers
  /** Objects fetched by this checkout (0 on an unchanged workspace). */
  downloaded: number
  /** Objects in storage that could not be materialized (invalid names, a file where a folder is). */
  skipped: SkippedFile[]
  /**
   * Scans dir, writes changes back to storage and updates the manifest. Call only once the sandbox is dead.
   * With limits, the same walk counts the whole copy first: past one, nothing is written and `passed`
   * names it (then discard()).
   */
  commit(limits?: { bytes: number; entries: number }): Promise<SyncResult & { passed?: string }>
  /**
   * Instead of commit: throws away what the run changed, bringing dir back to what storage holds (only
   * what the run touched is downloaded again). Call only once the sandbox is dead.
   */
  discard(): Promise<void>
  /** Ends the checkout and releases the workspace lock; safe to call twice, and must follow errors too. */
  release(): Promise<void>
}

export interface WorkspaceMirrors {
  checkout(storage: ObjectStore, workspacePrefix: string, signal?: AbortSignal): Promise<Checkout>
}

const rootMode = 0o711
const privateMode = 0o700
// Workspaces whose manifest stays in memory; one of 1,000 files takes a few hundred kilobytes.
const cachedManifests = 64

export function createWorkspaceMirrors(options: MirrorOptions): WorkspaceMirrors {
  const locks = createKeyedLock()
  const manifests = createManifestCache(cachedManifests)
  const freshness = options.changeMarkers && createFreshness(options.root, options.changeMarkers)
  const owner: Owner | undefined = options.owner && { uid: options.owner.uid, gid: options.owner.gid }
  // Upper layers this process emptied after their last run (a commit or discard) and that no run has
  // taken since: the next checkout need not empty them again (two folder reads and three ensures).
  const emptiedLayers = new Set<string>()

  async function open(
    storage: ObjectStore,
    prefix: string,
    signal: AbortSignal | undefined,
    unlock: () => void,
  ): Promise<Checkout> {
    // The wait for the lock may have outlasted the caller's patience.
    signal?.throwIfAborted()
    const layout = await prepareLayout(options.root, prefix, owner)
    const manifest = await manifests.load(layout.manifest, prefix)

    /** Makes the copy equal to storage from a full listing. */
    async function sync(syncSignal: AbortSignal | undefined): Promise<Awaited<ReturnType<typeof materialize>>> {
      // Written before the listing starts: a write that lands after it then deletes the marker (freshness.ts).
      const listing = await freshness?.beforeListing(storage, prefix, manifest)
      let materialized: Awaited<ReturnType<typeof materialize>>
      try {
        materialized = await materialize({ storage, prefix, layout, manifest, owner, signal: syncSignal })
      } finally {
        // Also after a failure: the manifest then lists what is really on disk, not what was planned.
        await manifests.save(layout.manifest, prefix, manifest)
      }
      if (listing) freshness?.listed(manifest, listing, materialized.skipped)
      return materialized
    }

    const unchanged = await freshness?.unchanged(storage, prefix, manifest)
    const materialized = unchanged ? { downloaded: 0, skipped: unchanged } : await sync(signal)
    // From here the sandbox may change the copy: trusted again only once a commit or discard settles it.
    freshness?.unsettled(manifest)
    // The copy is what the manifest holds until the commit, so its usage is counted once, here.
    const lowerUsage = usageOf(manifest)
    // Over an empty copy an overlay saves no walk (what the run wrote is all a commit reads either way) and
    // costs three programs and a mount per run: such a run goes over the copy itself.
    const overlays =
      options.overlays && lowerUsage.entries > 0 && overlayablePath(layout.files) ? options.overlays : undefined
    const layers = overlays && (await prepareLayers(layout, owner, emptiedLayers))
    const overlay = layers && { ...layers, lowerUsage }
    let released = false
    return {
      dir: layout.files,
      ...(overlay ? { overlay } : {}),
      downloaded: materialized.downloaded,
      skipped: [...materialized.skipped],
      async commit(limits) {
        // Another checkout of this workspace may already be rewriting the folder.
        if (released) throw new Error('This checkout was released; check the workspace out again.')
        let committed: Awaited<ReturnType<typeof commitChanges>> | undefined
        try {
          const common = { storage, prefix, manifest, maxFileBytes: options.maxFileBytes, owner, limits }
          committed =
            overlay && overlays
              ? await commitOverlay({ ...common, layers: overlay, overlays })
              : await commitChanges({ ...common, files: layout.files })
          const { changes, skipped, passed } = committed
          // Both layers are emptied by every commit over them that was not past a limit (commit-overlay.ts).
          if (layers && !passed) emptiedLayers.add(layers.upper)
          return passed ? { changes, skipped, passed } : { changes, skipped }
        } finally {
          await manifests.save(layout.manifest, prefix, manifest)
          // Other instances' copies are out of date now (a commit that failed midway may have written part of
          // its changes). Also without markers of its own (a fresh copy per call): the others may have theirs.
          if (!committed || committed.changes.length > 0) {
            await (freshness ? freshness.changed(storage, prefix) : markWorkspaceChanged(storage, prefix))
          }
          if (committed?.exact) freshness?.settled(manifest)
        }
      },
      async discard() {
        if (released) throw new Error('This checkout was released; check the workspace out again.')
        // Over an overlay the copy was never written: dropping what the run wrote is enough.
        if (layers) {
          await clearLayers(layers, owner)
          emptiedLayers.add(layers.upper)
        } else await sync(undefined)
      },
      async release() {
        released = true
        unlock()
      },
    }
  }

  return {
    async checkout(storage, workspacePrefix, signal) {
      const unlock = await locks.acquire(workspacePrefix, signal)
      try {
        return await open(storage, workspacePrefix, signal, unlock)
      } catch (error) {
        unlock()
        throw error
      }
    },
  }
}

async function prepareLayout(root: string, prefix: string, owner: Owner | undefined): Promise<MirrorLayout> {
  // Made only by us, so an explicit chmod is needed against the umask; an existing root is left as configured.
  if ((await mkdir(root, { recursive: true, mode: rootMode })) !== undefined) await chmod(root, rootMode)
  const id = createHash('sha256').update(prefix).digest('hex').slice(0, 32)
  const base = join(root, id)
  await ensurePrivateFolder(base, rootMode)
  const layout: MirrorLayout = {
    files: join(base, 'files'),
    incoming: join(base, 'incoming'),
    manifest: join(base, 'manifest.json'),
  }
  // Leftovers of a crashed download are useless: their object is downloaded again anyway.
  await removeTree(layout.incoming)
  await ensurePrivateFolder(layout.incoming, privateMode)
  await ensureFolder(layout.files, owner)
  return layout
}

/**
 * The overlay layers beside the copy, owned by the sandbox user (it mounts them). A run that failed
 * before its commit may have left an upper layer: what it wrote is dropped, as a checkout would. Layers
 * in `emptied` are taken as they are, and leave it: the run this checkout is for may write to them.
 */
async function prepareLayers(
  layout: MirrorLayout,
  owner: Owner | undefined,
  emptied: Set<string>,
): Promise<Omit<OverlayLayers, 'lowerUsage'>> {
  const base = join(layout.files, '..')
  const layers = {
    lower: layout.files,
    upper: join(base, 'upper'),
    work: join(base, 'overlay-work'),
    merged: join(base, 'merged'),
  }
  if (emptied.delete(layers.upper)) return layers
  await clearLayers(layers, owner)
  await ensureFolder(layers.merged, owner)
  return layers
}

/** Bytes and entries of a copy that holds exactly the manifest's files and their folders. */
function usageOf(manifest: Manifest): { bytes: number; entries: number } {
  let bytes = 0
  for (const entry of manifest.values()) bytes += Number(entry.size)
  return { bytes, entries: manifest.size + foldersOf(manifest.keys()).size }
}

/** A folder only the service uses: a symlink or file in its place is replaced, never followed. */
async function ensurePrivateFolder(location: string, mode: number): Promise<void> {
  const stats = await lstatOrNull(location)
  if (stats?.isDirectory()) return
  if (stats) await removeTree(location)
  await mkdir(location, { mode })
  await chmod(location, mode)
}
