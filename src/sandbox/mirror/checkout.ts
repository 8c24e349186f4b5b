import { randomUUID } from 'node:crypto'
import { type BigIntStats, constants } from 'node:fs'
import { chmod, lchown, lstat, mkdir, open, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { listAll } from '../../storage/list-all'
import type { ObjectInfo, ObjectStore } from '../../storage/store'
import { entryOf, fingerprintMatches, type Manifest, type ManifestEntry } from './manifest'
import { runPool } from './pool'
import { isWorkspacePath, lstatOrNull, walkTree } from './scan'
import { removeTree } from './tree'
import type { SkippedFile } from './types'

/**
 * Checkout makes the mirror folder exactly equal to storage, downloading only what the manifest
 * cannot vouch for. It runs while no sandboxed process is alive (the caller holds the workspace
 * lock and starts the sandbox afterwards), so the tree cannot change underneath it.
 */
export interface Owner {
  uid: number
  gid: number
}

export interface MirrorLayout {
  /** The folder bind-mounted at /workspace. */
  files: string
  /** Download temp files; beside files/ so the final rename stays on one filesystem. */
  incoming: string
  manifest: string
}

export interface MaterializeInput {
  storage: ObjectStore
  prefix: string
  layout: MirrorLayout
  /** Updated in place to describe exactly what is on disk, even when materialize throws midway. */
  manifest: Manifest
  owner: Owner | undefined
  signal: AbortSignal | undefined
}

export const fileMode = 0o644
export const folderMode = 0o755
const downloadConcurrency = 8
const tempFlags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW

export async function materialize(input: MaterializeInput): Promise<{ downloaded: number; skipped: SkippedFile[] }> {
  const { storage, prefix, layout, manifest, owner, signal } = input
  const plan = planFromObjects(await listAll(storage, prefix), prefix, manifest)
  const kept = new Map<string, ManifestEntry>()
  // Folders already in the right shape need no further syscalls below.
  const readyFolders = new Set<string>()

  await walkTree(
    layout.files,
    async (entry) => {
      if (entry.allowed && entry.kind === 'directory' && plan.folders.has(entry.path)) {
        if (isReadyFolder(entry.stats, owner)) readyFolders.add(entry.path)
        return true
      }
      const object = entry.allowed && entry.kind === 'file' ? plan.files.get(entry.path) : undefined
      if (object) {
        const known = manifest.get(entry.path)
        const trusted =
          known?.etag === object.etag && fingerprintMatches(known, entry.stats) && isOwnedBy(entry.stats, owner)
        if (trusted) kept.set(entry.path, known)
        // An untrusted file stays until the download's rename replaces it in one step.
        return false
      }
      await entry.remove()
      return false
    },
    { trusted: manifest },
  )

  manifest.clear()
  for (const [path, entry] of kept) manifest.set(path, entry)
  // Sorted, so every parent folder is made before its children.
  for (const folder of [...plan.folders].sort()) {
    if (readyFolders.has(folder)) continue
    await ensureFolder(join(layout.files, ...folder.split('/')), owner)
  }

  let downloaded = 0
  const missing = [...plan.files].filter(([path]) => !kept.has(path))
  await runPool(missing, downloadConcurrency, async ([path, object]) => {
    signal?.throwIfAborted()
    const landed = await download(storage, object.key, join(layout.files, ...path.split('/')), layout.incoming, owner)
    // Deleted from storage since the listing: nothing to materialize.
    if (!landed) return
    manifest.set(path, entryOf(landed.etag, landed.stats))
    downloaded++
  })
  return { downloaded, skipped: plan.skipped }
}

interface Plan {
  files: Map<string, ObjectInfo>
  folders: Set<string>
  skipped: SkippedFile[]
}

/** Paths in the manifest were checked when they entered it, so only new ones pay for isWorkspacePath. */
function planFromObjects(objects: ObjectInfo[], prefix: string, manifest: Manifest): Plan {
  const plan: Plan = { files: new Map(), folders: new Set(), skipped: [] }
  for (const object of objects) {
    const path = object.key.slice(prefix.length)
    if (!manifest.has(path) && !isWorkspacePath(path)) {
      plan.skipped.push({ path, reason: 'name not allowed in a workspace' })
      continue
    }
    plan.files.set(path, object)
    const segments = path.split('/')
    for (let depth = 1; depth < segments.length; depth++) plan.folders.add(segments.slice(0, depth).join('/'))
  }
  // Object stores allow "a" and "a/b" side by side; a folder cannot also be a file, so the file waits.
  for (const folder of plan.folders) {
    if (plan.files.delete(folder)) plan.skipped.push({ path: folder, reason: 'a folder of the same name exists' })
  }
  return plan
}

export function isOwnedBy(stats: { uid: bigint; gid: bigint }, owner: Owner | undefined): boolean {
  return !owner || (stats.uid === BigInt(owner.uid) && stats.gid === BigInt(owner.gid))
}

export function isReadyFolder(stats: BigIntStats, owner: Owner | undefined): boolean {
  return stats.isDirectory() && Number(stats.mode & 0o7777n) === folderMode && isOwnedBy(stats, owner)
}

export async function ensureFolder(location: string, owner: Owner | undefined): Promise<void> {
  let stats = await lstatOrNull(location)
  if (stats && !stats.isDirectory()) {
    await removeTree(location)
    stats = null
  }
  if (!stats) {
    await mkdir(location)
    stats = await lstat(location, { bigint: true })
  }
  if (Number(stats.mode & 0o7777n) !== folderMode) await chmod(location, folderMode)
  if (!isOwnedBy(stats, owner) && owner) await lchown(location, owner.uid, owner.gid)
}

/** Returns the etag of the version written and the final file's stats, or null when the object vanished. */
async function download(
  storage: ObjectStore,
  key: string,
  target: string,
  incoming: string,
  owner: Owner | undefined,
): Promise<{ etag: string; stats: BigIntStats } | null> {
  const found = await storage.getStream(key)
  if (!found) return null
  const temp = join(incoming, randomUUID())
  try {
    await writeTemp(temp, found.body, owner)
    await rename(temp, target)
    // Taken after the rename: it can change ctime, and the fingerprint must match what the next scan sees.
    return { etag: found.etag, stats: await lstat(target, { bigint: true }) }
  } catch (error) {
    if (!found.body.locked) await found.body.cancel(error).catch(() => {})
    await rm(temp, { force: true }).catch(() => {})
    throw error
  }
}

async function writeTemp(temp: string, body: ReadableStream<Uint8Array>, owner: Owner | undefined): Promise<void> {
  const handle = await open(temp, tempFlags, 0o600)
  try {
    const reader = body.getReader()
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        let offset = 0
        while (offset < value.byteLength) {
          offset += (await handle.write(value, offset, value.byteLength - offset)).bytesWritten
        }
      }
    } catch (error) {
      await reader.cancel(error).catch(() => {})
      throw error
    } finally {
      reader.releaseLock()
    }
    // Explicit rather than through open's mode, which the umask would trim.
    await handle.chmod(fileMode)
    if (owner) await handle.chown(owner.uid, owner.gid)
  } finally {
    await handle.close()
  }
}
