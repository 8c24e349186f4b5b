import { type BwrapLayout, bwrapInvocation, sandboxUid } from './bwrap-arguments'
import type { CgroupManager, RunCgroup } from './cgroup'
import type { Sandbox, SandboxLimits, SandboxRunRequest, SandboxRunResult, SandboxStatus } from './sandbox'
import { probeSandbox, runSandboxedChild, type SandboxedProgram, workspaceLimitOf } from './sandboxed-child'
import { spawnSandboxedProcess } from './sandboxed-process'

export { findUsrMergedLinks } from './bwrap-arguments'

export interface BwrapOptions extends BwrapLayout {
  bwrapPath: string
  limits: SandboxLimits
  /** Host uid/gid the sandbox runs as when the service is root; unprivileged users keep their own. */
  sandboxUser: { uid: number; gid: number } | undefined
  cgroups: CgroupManager | undefined
}

const joinCgroupsScript = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'

export function createBwrapSandbox(options: BwrapOptions): Sandbox {
  const { limits } = options
  const enforced: Record<string, string> = {
    isolation: 'bubblewrap: new user, pid, net, ipc, uts, mount and cgroup namespaces; read-only /usr; private /tmp',
    network: options.forwarder
      ? "empty network namespace; calls with egress reach only toolport's proxy (a Unix socket bound into the sandbox)"
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
    workspace: `${limits.workspaceBytes} bytes and ${limits.workspaceEntries} entries: sampled every 250 ms, counted at any depth once the command ended; past them nothing is synced`,
  }
  return {
    executor: 'bwrap',
    egress: options.forwarder !== undefined,
    status: (): SandboxStatus => ({ executor: 'bwrap', status: 'ok', enforced }),
    async run(request): Promise<SandboxRunResult> {
      const cgroup = await options.cgroups?.create({ memoryBytes: limits.memoryBytes, pids: limits.pids })
      try {
        const result = await runSandboxedChild(await bwrapChain(options, request, cgroup), request, limits)
        const { killedFor, ...rest } = result
        const workspaceLimit = workspaceLimitOf(killedFor)
        return { ...rest, limitExceeded: (await cgroup?.limitHit()) ?? workspaceLimit }
      } finally {
        await cgroup?.remove()
      }
    },
    async start(request) {
      const cgroup = await options.cgroups?.create({ memoryBytes: limits.memoryBytes, pids: limits.pids })
      try {
        // No timeout and no caller signal: a started process lives until it is killed.
        const program = await bwrapChain(
          options,
          { ...request, command: '', timeoutMs: 0, signal: new AbortController().signal },
          cgroup,
        )
        return spawnSandboxedProcess(program, () => cgroup?.remove())
      } catch (error) {
        await cgroup?.remove()
        throw error
      }
    },
  }
}

/**
 * The whole chain that starts one sandboxed program: join the run's cgroups, set rlimits, drop to the
 * sandbox user (as root), then bwrap with the request's namespaces and mounts. bwrap is pid 1 of the
 * sandbox: it starts with no environment at all (a shell on the way exports PWD, which /proc/1/environ
 * would show) in /, and its options arrive through descriptor 3 (see bwrap-arguments.ts).
 */
export async function bwrapChain(
  options: BwrapOptions,
  request: SandboxRunRequest,
  cgroup: RunCgroup | undefined,
): Promise<SandboxedProgram> {
  const { limits } = options
  const addressSpace = cgroup ? [] : [`--as=${limits.memoryBytes}`]
  // Node cannot start under an address-space limit: behind the egress forwarder it binds the command alone.
  const behindForwarder = request.egressSocket !== undefined && options.forwarder !== undefined
  const rlimits = [
    `--nofile=${limits.openFiles}`,
    `--fsize=${limits.fileBytes}`,
    // With a pids cgroup, RLIMIT_NPROC only guards the shared host uid as a whole.
    `--nproc=${cgroup ? limits.pids * 8 : limits.pids}`,
    ...(behindForwarder ? [] : addressSpace),
  ]
  const dropUser = options.sandboxUser
    ? [
        'setpriv',
        `--reuid=${options.sandboxUser.uid}`,
        `--regid=${options.sandboxUser.gid}`,
        '--clear-groups',
        '--no-new-privs',
      ]
    : []
  const invocation = await bwrapInvocation(options, request, behindForwarder ? addressSpace : [])
  const chain = ['prlimit', ...rlimits, '--', ...dropUser, 'env', '-i', options.bwrapPath, ...invocation.args]
  return {
    file: '/bin/sh',
    args: ['-c', joinCgroupsScript, 'sh', ...(cgroup?.procsFiles ?? []), '--', ...chain],
    env: {},
    cwd: '/',
    inputs: invocation.inputs,
  }
}

/** Runs `true` through the whole chain once; the error text says why bwrap cannot work here. */
export function probeBwrap(options: BwrapOptions, workDir: string): Promise<string | undefined> {
  return probeSandbox(createBwrapSandbox(options), workDir, options.sandboxUser, 10_000)
}
