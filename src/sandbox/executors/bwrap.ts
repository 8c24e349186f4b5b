import { chmod, chown, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { removeTree } from '../mirror/tree'
import { type BwrapLayout, bwrapInvocation, sandboxUid } from './bwrap-arguments'
import type { CgroupManager, RunCgroup } from './cgroup'
import { StaleStartError } from './child'
import { listMerged, type MountProgram, overlayablePath, overlayMountLine, overlayNamespace } from './overlay'
import type { Sandbox, SandboxLimits, SandboxRunRequest, SandboxRunResult, SandboxStatus } from './sandbox'
import { probeSandbox, runSandboxedChild, workspaceLimitOf } from './sandboxed-child'
import { spawnSandboxedProcess } from './sandboxed-process'
import { createWarmStarts, startInputs } from './warm-start'

export { findUsrMergedLinks } from './bwrap-arguments'

export interface BwrapOptions extends BwrapLayout {
  bwrapPath: string
  limits: SandboxLimits
  /** Host uid/gid the sandbox runs as when the service is root; unprivileged users keep their own. */
  sandboxUser: { uid: number; gid: number } | undefined
  cgroups: CgroupManager | undefined
  /** Runs may take an overlay (the probe mounted one here: probeBwrapOverlay). */
  overlay?: boolean
  /** Why runs take no overlay, for the status: off by TOOLPORT_SHELL_OVERLAY, or what the probe met. */
  noOverlay?: string
  /** What mounts the overlay: util-linux's mount(8) unless the probe mounted with a static busybox. */
  mountProgram?: MountProgram
}

export function createBwrapSandbox(options: BwrapOptions): Sandbox {
  const { limits } = options
  // Each run's cgroups are made and joined before the run comes, and the uid drop and the overlay's
  // namespace done (warm-start.ts).
  const starts = createWarmStarts(
    async () => options.cgroups?.create({ memoryBytes: limits.memoryBytes, pids: limits.pids }),
    [...dropUserOf(options), ...(options.overlay ? overlayNamespace : [])],
  )
  const enforced: Record<string, string> = {
    isolation: 'bubblewrap: new user, pid, net, ipc, uts, mount and cgroup namespaces; read-only /usr; private /tmp',
    network: options.relay
      ? `empty network namespace; calls with egress reach only toolport's proxy (a Unix socket bound into the sandbox), through ${'socat' in options.relay ? 'socat' : "the service's Node"} on the sandbox's loopback`
      : 'none (empty network namespace)',
    user: options.sandboxUser
      ? `uid ${sandboxUid} in the sandbox, host uid ${options.sandboxUser.uid}; all capabilities dropped`
      : `uid ${sandboxUid} in the sandbox, the service's own host uid; all capabilities dropped`,
    ...(options.cgroups
      ? options.cgroups.describe(limits)
      : {
          memory: `RLIMIT_AS ${limits.memoryBytes} bytes (no writable cgroup)`,
          processes: `RLIMIT_NPROC ${limits.pids} (per host uid)`,
        }),
    file_size: `RLIMIT_FSIZE ${limits.fileBytes} bytes`,
    open_files: `RLIMIT_NOFILE ${limits.openFiles}`,
    workspace_sync: options.overlay
      ? `overlay: the command writes to an upper layer over the copy; the sync reads only that layer (mounted by ${options.mountProgram?.[0] ?? 'mount'})`
      : `the copy itself, walked in full after each command${options.noOverlay ? ` (no overlay: ${options.noOverlay})` : ''}`,
    workspace: `${limits.workspaceBytes} bytes and ${limits.workspaceEntries} entries: sampled every 250 ms, counted at any depth once the command ended; past them nothing is synced`,
  }
  return {
    executor: 'bwrap',
    egress: options.relay !== undefined,
    ...(options.overlay
      ? {
          overlays: {
            list: (layers, folders) => listMerged(layers, folders, dropUserOf(options), options.mountProgram),
          },
        }
      : {}),
    status: (): SandboxStatus => ({ executor: 'bwrap', status: 'ok', enforced }),
    async run(request): Promise<SandboxRunResult> {
      // A start that died while it waited (killed from outside) is replaced once.
      for (let attempt = 0; ; attempt++) {
        const start = await starts.take()
        try {
          const inputs = await handOver(options, request, start.cgroup)
          const result = await runSandboxedChild({ spawned: start.child, inputs }, request, limits)
          const { killedFor, ...rest } = result
          const workspaceLimit = workspaceLimitOf(killedFor)
          const [usage, limitHit] = await Promise.all([start.cgroup?.usage(), start.cgroup?.limitHit()])
          return { ...rest, limitExceeded: limitHit ?? workspaceLimit, ...(usage ? { usage } : {}) }
        } catch (error) {
          if (error instanceof StaleStartError && attempt === 0) continue
          throw error
        } finally {
          await start.cgroup?.remove()
          starts.refill()
        }
      }
    },
    close: () => starts.close(),
    async start(request) {
      // A long-lived program takes a start made ahead too; no timeout and no caller signal: it lives
      // until it is killed.
      const start = await starts.take()
      try {
        const inputs = await handOver(
          options,
          { ...request, command: '', timeoutMs: 0, signal: new AbortController().signal },
          start.cgroup,
        )
        return spawnSandboxedProcess({ spawned: start.child, inputs }, () => start.cgroup?.remove())
      } catch (error) {
        await starts.discard(start)
        throw error
      } finally {
        starts.refill()
      }
    },
  }
}

/**
 * What a start made ahead (already past the uid drop, in the overlay's namespace where runs may take an
 * overlay) is given for this request, as its descriptors' data (startInputs): the overlay's mount as a
 * shell line, then rlimits and bwrap.
 */
async function handOver(
  options: BwrapOptions,
  request: SandboxRunRequest,
  cgroup: RunCgroup | undefined,
): Promise<Uint8Array[]> {
  const { rlimits, invocation } = await rlimitsAndInvocation(options, request, cgroup)
  const lines = request.overlay && options.overlay ? [overlayMountLine(request.overlay, options.mountProgram)] : []
  const argv = ['prlimit', ...rlimits, '--', options.bwrapPath, ...invocation.args]
  const inputs = startInputs(lines, argv, invocation.inputs)
  if (!inputs) throw new Error(`bwrap takes ${invocation.inputs.length} descriptors, more than a start holds`)
  return inputs
}

async function rlimitsAndInvocation(options: BwrapOptions, request: SandboxRunRequest, cgroup: RunCgroup | undefined) {
  const { limits } = options
  const addressSpace = cgroup ? [] : [`--as=${limits.memoryBytes}`]
  // Node cannot start under an address-space limit: behind the Node forwarder it binds the command alone.
  const behindForwarder =
    request.egressSocket !== undefined && options.relay !== undefined && 'forwarder' in options.relay
  const rlimits = [
    `--nofile=${limits.openFiles}`,
    `--fsize=${limits.fileBytes}`,
    // With a pids cgroup, RLIMIT_NPROC only guards the shared host uid as a whole.
    `--nproc=${cgroup ? limits.pids * 8 : limits.pids}`,
    ...(behindForwarder ? [] : addressSpace),
  ]
  if (request.overlay && !options.overlay) throw new Error('this sandbox was not set up for overlays')
  const invocation = await bwrapInvocation(options, request, behindForwarder ? addressSpace : [])
  return { rlimits, invocation }
}

function dropUserOf(options: BwrapOptions): string[] {
  if (!options.sandboxUser) return []
  const { uid, gid } = options.sandboxUser
  return ['setpriv', `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--no-new-privs']
}

/**
 * Runs a write through the chain over a fresh overlay inside the work folder; the text says why overlays
 * cannot be used here (then commands run over the copy itself).
 */
export async function probeBwrapOverlay(options: BwrapOptions, workDir: string): Promise<string | undefined> {
  if (!overlayablePath(workDir)) return `the work folder's path has a character overlayfs cannot take (, : \\)`
  const base = await mkdtemp(join(workDir, 'probe-overlay-'))
  const sandbox = createBwrapSandbox({ ...options, overlay: true })
  try {
    // mkdtemp makes it 0700: the sandbox user mounts the layers, so it must reach them.
    await chmod(base, 0o711)
    const layers = {
      lower: join(base, 'lower'),
      upper: join(base, 'upper'),
      work: join(base, 'work'),
      merged: join(base, 'merged'),
      lowerUsage: { bytes: 0, entries: 0 },
    }
    for (const folder of [layers.lower, layers.upper, layers.work, layers.merged]) {
      await mkdir(folder)
      if (options.sandboxUser) await chown(folder, options.sandboxUser.uid, options.sandboxUser.gid)
    }
    await writeFile(join(layers.lower, 'kept'), 'lower\n')
    const result = await sandbox.run({
      command: 'cat kept && echo written > new && rm kept',
      workspaceDir: layers.lower,
      overlay: layers,
      cwd: '',
      timeoutMs: 10_000,
      signal: new AbortController().signal,
    })
    if (result.exitCode !== 0) return result.output.text.trim() || `exit code ${result.exitCode}`
    const wrote = await readFile(join(layers.upper, 'new'), 'utf8').catch(() => '')
    const kept = await readFile(join(layers.lower, 'kept'), 'utf8').catch(() => '')
    if (wrote !== 'written\n' || kept !== 'lower\n') return 'the overlay did not keep the layers apart'
    const listing = await sandbox.overlays?.list(layers, [])
    return listing ? undefined : 'the overlay could not be listed'
  } catch (error) {
    return (error as Error).message
  } finally {
    await sandbox.close?.()
    await removeTree(base)
  }
}

/** Runs `true` through the whole chain once; the error text says why bwrap cannot work here. */
export async function probeBwrap(options: BwrapOptions, workDir: string): Promise<string | undefined> {
  const sandbox = createBwrapSandbox(options)
  try {
    return await probeSandbox(sandbox, workDir, options.sandboxUser, 10_000)
  } finally {
    await sandbox.close?.()
  }
}
