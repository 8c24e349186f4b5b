import { type BigIntStats, closeSync, constants, createReadStream, fstatSync, lstatSync, openSync } from 'node:fs'
import { access, mkdir, realpath, unlink } from 'node:fs/promises'
import { Readable } from 'node:stream'
import { ToolError } from '../core/errors'
import { createKeyedLock } from '../core/keyed-lock'
import { guarded, hasCode } from './fs-errors'
import { collectEntries } from './fs-list'
import { namesOpenFiles, openVerified } from './fs-open'
import { checkedKey, checkedPrefix, inspect, isPlainFolder, keyPath } from './fs-paths'
import { readWhole, readWholeSync } from './fs-read'
import { pruneEmptyParents, writeObject } from './fs-write'
import { clampListLimit, selectListPage } from './keys'
import type {
  ListOptions,
  ListResult,
  ObjectBody,
  ObjectInfo,
  ObjectStore,
  ObjectStream,
  ObjectTooLarge,
  PutOptions,
  StoredObject,
} from './store'
import { created, type DeleteOptions, holds, PreconditionFailed } from './store'
import { timeSlices } from './time-slices'

/**
 * An ObjectStore on a local directory: key 'a/b' is the file '<root>/a/b'. The root may be shared
 * with processes we do not trust (a sandbox writing into a workspace), so every path is checked
 * (inspect, walk) and a symbolic link anywhere below the root is refused rather than followed.
 */
export interface FsStorageOptions {
  root: string
}

// O_NONBLOCK: if a FIFO is swapped in after the lstat check, open must not hang waiting for a writer.
const readFlags = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK

/**
 * get reads files up to this size with a synchronous read. A small read (and open, fstat and close
 * of any file) in a local folder is answered from the kernel's caches in a few microseconds, while
 * the four thread-pool hops of an asynchronous read cost ~40 µs of CPU even on an idle machine, and
 * under load they were the largest part of a small read_file's CPU (a --cpu-prof of
 * bench/http-overhead.ts). The data of larger files, whose reads take long enough to hold up other
 * calls, still goes through the thread pool.
 */
const syncReadMaxBytes = 64 * 1024

export async function createFsStorage(options: FsStorageOptions): Promise<ObjectStore> {
  await mkdir(options.root, { recursive: true })
  const root = await realpath(options.root)
  const pathOf = (key: string) => keyPath(root, key)
  const canVerifyOpens = await namesOpenFiles(root)
  const turns = createKeyedLock()

  /**
   * The descriptor of key's file for get, getStream and head, or null when there is none: opened
   * and proven in one step (openVerified) where the kernel can name open files, else after
   * inspect's checks. A symlink below the root throws, from inspect, as everywhere else.
   */
  async function openFile(key: string): Promise<number | null> {
    const path = pathOf(key)
    const verified = canVerifyOpens ? openVerified(path, readFlags) : null
    if (verified !== null) return verified
    const found = await inspect(root, key)
    if (!found?.isFile()) return null
    try {
      return openSync(path, readFlags)
    } catch (error) {
      if (hasCode(error, 'ENOENT', 'ENOTDIR', 'EISDIR')) return null
      throw error
    }
  }

  /**
   * key's open file with its fstat, or null when there is none or what is there is not a regular
   * file (a folder or a device opened in its place). The caller closes the descriptor.
   */
  async function openRegular(key: string): Promise<{ fd: number; stats: BigIntStats } | null> {
    const fd = await openFile(key)
    if (fd === null) return null
    let stats: BigIntStats
    try {
      stats = fstatSync(fd, { bigint: true })
    } catch (error) {
      closeSync(fd)
      throw error
    }
    if (stats.isFile()) return { fd, stats }
    closeSync(fd)
    return null
  }

  // get opens, checks and closes with synchronous calls (metadata, as inspect), and reads a small
  // file synchronously too (syncReadMaxBytes); only a larger file's data goes through the thread pool.
  async function get(key: string, maxBytes = Number.POSITIVE_INFINITY): Promise<StoredObject | ObjectTooLarge | null> {
    const opened = await openRegular(key)
    if (!opened) return null
    const { fd, stats } = opened
    try {
      // The size that counts is the open file's: it may have grown since the path was checked.
      if (Number(stats.size) > maxBytes) return { ...infoOf(key, stats), tooLarge: true }
      const body = stats.size <= syncReadMaxBytes ? readWholeSync(fd, stats) : await readWhole(fd, stats)
      return { ...infoOf(key, stats), body }
    } finally {
      closeSync(fd)
    }
  }

  // The stream reads the very file that was proven, through its descriptor, and closes it when it
  // ends, fails or is cancelled.
  async function getStream(key: string): Promise<ObjectStream | null> {
    const opened = await openRegular(key)
    if (!opened) return null
    const stream = createReadStream('', { fd: opened.fd, autoClose: true })
    const body = Readable.toWeb(stream) as unknown as ReadableStream<Uint8Array>
    return { ...infoOf(key, opened.stats), body }
  }

  // An open and an fstat, as get: what is described is the file the path names at that moment, with
  // no window between the check and the stat for a symlink to be swapped in.
  async function head(key: string): Promise<ObjectInfo | null> {
    const opened = await openRegular(key)
    if (!opened) return null
    closeSync(opened.fd)
    return infoOf(key, opened.stats)
  }

  /**
   * Every write and delete of a key takes its turn (an in-process lock per key), so checking a write's
   * condition against the version there and writing are one step. One folder serves one process: another
   * process writing it is not in these turns (docs/storage.md).
   */
  async function inTurn<T>(key: string, critical: () => Promise<T>): Promise<T> {
    const release = await turns.acquire(key)
    try {
      return await critical()
    } finally {
      release()
    }
  }

  /** The regular file at key now (null: none), as its etag is made. */
  async function current(key: string): Promise<BigIntStats | null> {
    const stats = await inspect(root, key)
    return stats?.isFile() ? stats : null
  }

  async function put(key: string, body: ObjectBody, options: PutOptions = {}): Promise<ObjectInfo> {
    return inTurn(key, async () => {
      const previous = await current(key)
      if (!holds(previous ? infoOf(key, previous) : undefined, options)) {
        if (body instanceof ReadableStream && !body.locked) await body.cancel().catch(() => {})
        throw new PreconditionFailed()
      }
      // A new key is linked into place: a file another process made meanwhile is not replaced (EEXIST).
      const mode = previous ? 'replace' : 'create'
      try {
        return infoOf(key, await writeObject(root, key, body, mode, previous))
      } catch (error) {
        if (!hasCode(error, 'EEXIST')) throw error
        if (options.ifNoneMatch === '*' || options.ifMatch !== undefined) throw new PreconditionFailed()
        return infoOf(key, await writeObject(root, key, body, 'replace', await current(key)))
      }
    })
  }

  async function list(prefix: string, options: ListOptions): Promise<ListResult> {
    const slash = prefix.lastIndexOf('/')
    const folderKey = slash === -1 ? '' : prefix.slice(0, slash)
    if (folderKey !== '' && !(await isPlainFolder(root, folderKey))) return { objects: [], prefixes: [] }
    const entries = await collectEntries(root, folderKey, prefix.slice(slash + 1), options)
    const page = selectListPage(entries, options.cursor, clampListLimit(options.limit))
    const result: ListResult = { objects: [], prefixes: [] }
    const statNow = (path: string): BigIntStats | null => {
      try {
        return lstatSync(path, { bigint: true })
      } catch (error) {
        if (hasCode(error, 'ENOENT', 'ENOTDIR')) return null
        throw error
      }
    }
    // A promise per lstat costs several times the syscall itself (a 1,000-key page: ~17 ms against
    // ~4 ms synchronously), so the page is stat'ed synchronously, in time slices.
    const slices = timeSlices()
    for (const entry of page.entries) {
      if (entry.endsWith('/')) {
        result.prefixes.push(entry)
        continue
      }
      await slices.pause()
      const stats = statNow(pathOf(entry))
      // Gone or replaced since the directory was read: leave it out of this page.
      if (stats?.isFile()) result.objects.push(infoOf(entry, stats))
    }
    if (page.cursor !== undefined) result.cursor = page.cursor
    return result
  }

  async function remove(key: string, options: DeleteOptions = {}): Promise<void> {
    return inTurn(key, async () => {
      // A directory (or any other non-file) is not an object, so there is nothing to delete.
      const previous = await current(key)
      if (!previous) return
      if (options.ifMatch !== undefined && infoOf(key, previous).etag !== options.ifMatch) {
        throw new PreconditionFailed()
      }
      try {
        await unlink(pathOf(key))
      } catch (error) {
        if (!hasCode(error, 'ENOENT')) throw error
      }
      await pruneEmptyParents(root, key)
    })
  }

  async function copy(fromKey: string, toKey: string): Promise<ObjectInfo> {
    const source = await getStream(fromKey)
    if (!source) throw new ToolError('not_found', 'The object to copy does not exist.')
    return put(toKey, source.body)
  }

  return {
    driver: 'fs',
    get: (key) => guarded(() => get(checkedKey(key)) as Promise<StoredObject | null>),
    getWithin: (key, maxBytes) => guarded(() => get(checkedKey(key), maxBytes)),
    getStream: (key) => guarded(() => getStream(checkedKey(key))),
    head: (key) => guarded(() => head(checkedKey(key))),
    put: (key, body, options) => guarded(() => put(checkedKey(key), body, options)),
    create: (key, body) => guarded(() => created(() => put(checkedKey(key), body, { ifNoneMatch: '*' }))),
    list: (prefix, options = {}) => guarded(() => list(checkedPrefix(prefix), options)),
    delete: (key, options) => guarded(() => remove(checkedKey(key), options)),
    copy: (fromKey, toKey) => guarded(() => copy(checkedKey(fromKey), checkedKey(toKey))),
    check: async () => {
      try {
        await access(root, constants.R_OK | constants.W_OK | constants.X_OK)
      } catch (cause) {
        throw new ToolError('unavailable', 'Storage is unavailable.', { cause, origin: 'storage' })
      }
    },
  }
}

function infoOf(key: string, stats: BigIntStats): ObjectInfo {
  // Each put renames a fresh file into place, so the inode changes with every write; size and the
  // nanosecond mtime guard against an inode number being reused.
  const etag = `${stats.ino.toString(36)}-${stats.size.toString(36)}-${stats.mtimeNs.toString(36)}`
  return { key, size: Number(stats.size), etag, lastModified: stats.mtime }
}
