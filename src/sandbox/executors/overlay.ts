import { spawn } from 'node:child_process'
import { quoted } from './warm-start'

/**
 * The workspace as an overlay: the command sees the copy (lower) through an overlayfs whose upper
 * layer receives everything it writes, so what changed is known by construction and the sync never
 * walks the whole copy. bubblewrap 0.8 has no --overlay, so the mount is made by the chain itself, in
 * a user and mount namespace of its own (`unshare --user --map-root-user --mount`, as the sandbox's host
 * uid, after setpriv), where an unprivileged overlay is allowed (Linux 5.11+, `userxattr`); bwrap then
 * binds the merged folder at /workspace. The mount lives only as long as that namespace's processes.
 */
export interface OverlayLayers {
  /** The copy as storage holds it; the sandbox never writes to it. */
  lower: string
  /** Empty before each run; afterwards exactly what the run created, changed (copied up) or deleted (whiteouts). */
  upper: string
  /** overlayfs's own scratch folder, on the same filesystem as upper. */
  work: string
  /** The mount point bwrap binds at /workspace. */
  merged: string
  /** What lower holds (bytes, entries), so the watchdog can count the workspace as upper plus lower. */
  lowerUsage: { bytes: number; entries: number }
}

/**
 * The program that mounts the overlay. util-linux's mount(8) is everywhere bwrap is, and is spared
 * resolving the service's own absolute paths again (--no-canonicalize), looking for a mount.overlay
 * helper (-i) and its userspace table (-n): together about half a millisecond of the mount here. A
 * static busybox mounts the same overlay without the dynamic loader and mount(8)'s libraries (libmount,
 * libblkid, libselinux), about 0.7 ms less per run here; setup.ts takes it when the probe mounts with it.
 */
export const utilLinuxMount = ['mount', '-n', '-i', '--no-canonicalize'] as const
export const busyboxMount = (busybox: string) => [busybox, 'mount', '-n'] as const

/** The program a sandbox mounts with: util-linux's unless one was probed (BwrapOptions.mountProgram). */
export type MountProgram = readonly string[]

/**
 * The mount as a shell line over the layers in $1 to $4. Exits 97 without running anything when the
 * mount fails: the command must never see the copy itself.
 */
function mountScript(program: MountProgram): string {
  return `${program.map(quoted).join(' ')} -t overlay overlay -o "lowerdir=$1,upperdir=$2,workdir=$3,userxattr" "$4" || { echo "toolport: the workspace overlay could not be mounted; the command did not run" >&2; exit 97; }; `
}

/** The user and mount namespace of its own in which an unprivileged overlay may be mounted. */
export const overlayNamespace = ['unshare', '--user', '--map-root-user', '--mount']

/**
 * The same mount as shell lines, for a shell already in that namespace (a start made ahead,
 * warm-start.ts): the layers set as its arguments, then the mount.
 */
export function overlayMountLine(layers: OverlayLayers, program: MountProgram = utilLinuxMount): string {
  const paths = [layers.lower, layers.upper, layers.work, layers.merged].map(quoted).join(' ')
  return `set -- ${paths}; ${mountScript(program)}`
}

/** overlayfs takes its layers in one option string: these characters would be read as separators. */
export function overlayablePath(path: string): boolean {
  return !/[,:\\\n]/.test(path)
}

/**
 * Lists the merged view of the given folders (workspace-relative, each a folder of both layers), by
 * mounting the layers again once the run is over: whether such a folder merges with lower or hides it
 * (opaque: removed and made again during the run) is kept in an extended attribute Node cannot read,
 * and the merged listing says it exactly. Returns folder → names (bytes: names need not be UTF-8).
 */
export function listMerged(
  layers: OverlayLayers,
  folders: readonly string[],
  dropUser: readonly string[],
  program: MountProgram = utilLinuxMount,
): Promise<Map<string, Buffer[]>> {
  const starts = folders.map((folder) => `./${folder}`)
  // After the run, with nothing of it alive: the merged entries of the named folders (NUL-separated paths).
  const listScript = `${mountScript(program)}cd "$4" || exit 97; shift 4; exec find "$@" -mindepth 1 -maxdepth 1 -print0`
  const args = [...dropUser, ...overlayNamespace, '/bin/sh', '-c', listScript, 'sh']
  args.push(layers.lower, layers.upper, layers.work, layers.merged, ...starts)
  const [file, ...rest] = args as [string, ...string[]]
  return new Promise((resolve, reject) => {
    const child = spawn(file, rest, { env: {}, cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] })
    const out: Buffer[] = []
    let err = ''
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk))
    child.stderr.on('data', (chunk: Buffer) => {
      if (err.length < 2000) err += chunk.toString()
    })
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0) {
        reject(new Error(`listing the workspace overlay failed (exit ${code}): ${err.trim()}`))
        return
      }
      resolve(groupByFolder(Buffer.concat(out), folders))
    })
  })
}

/** find prints `./<folder>/<name>` for each entry: a name has no '/', so the folder is all before the last. */
function groupByFolder(output: Buffer, folders: readonly string[]): Map<string, Buffer[]> {
  const listings = new Map<string, Buffer[]>(folders.map((folder) => [folder, []]))
  let start = 0
  for (let end = output.indexOf(0, start); end !== -1; end = output.indexOf(0, start)) {
    const entry = output.subarray(start, end)
    start = end + 1
    const slash = entry.lastIndexOf(0x2f)
    if (slash < 2) continue
    const folder = entry.subarray(2, slash).toString()
    listings.get(folder)?.push(Buffer.from(entry.subarray(slash + 1)))
  }
  return listings
}
