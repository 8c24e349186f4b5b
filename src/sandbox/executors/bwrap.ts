import { lstat, mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { type ForwarderRuntime, forwarderArgv, forwarderMounts } from '../egress/forwarder'
import type { CgroupManager } from './cgroup'
import type { Sandbox, SandboxLimits, SandboxRunRequest, SandboxRunResult, SandboxStatus } from './sandbox'
import { probeSandbox, runSandboxedChild, workspaceLimitOf } from './sandboxed-child'

export interface BwrapOptions {
  bwrapPath: string
  limits: SandboxLimits
  /** Host uid/gid the sandbox runs as when the service is root; unprivileged users keep their own. */
  sandboxUser: { uid: number; gid: number } | undefined
  cgroups: CgroupManager | undefined
  /** Folder holding the generated /etc files (passwd, group, hosts, hostname). */
  etcDir: string
  /** Top-level host entries that are symlinks into /usr on this system (usrmerge): /bin, /lib, … */
  usrMergedLinks: ReadonlyMap<string, string>
  /** The egress forwarder; undefined: no run ever gets network. */
  forwarder: ForwarderRuntime | undefined
}

const sandboxUid = 1000
const sandboxGid = 1000
const sandboxPath = '/usr/local/bin:/usr/bin:/bin'
// Host files a shell needs; the rest of /etc (shadow, keys, the service's config) stays invisible.
const hostEtcEntries = [
  '/etc/alternatives',
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/localtime',
  '/etc/nsswitch.conf',
  '/etc/ssl/certs',
  '/etc/mime.types',
]
const joinCgroupsScript = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'

export async function writeSandboxEtc(folder: string): Promise<void> {
  await mkdir(folder, { recursive: true })
  await writeFile(
    join(folder, 'passwd'),
    `root:x:0:0:root:/root:/bin/sh\nsandbox:x:${sandboxUid}:${sandboxGid}:sandbox:/workspace:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
  )
  await writeFile(join(folder, 'group'), `root:x:0:\nsandbox:x:${sandboxGid}:\nnogroup:x:65534:\n`)
  await writeFile(join(folder, 'hostname'), 'sandbox\n')
  await writeFile(join(folder, 'hosts'), '127.0.0.1 localhost sandbox\n::1 localhost\n')
}

export async function findUsrMergedLinks(): Promise<Map<string, string>> {
  const links = new Map<string, string>()
  for (const name of ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32']) {
    const stats = await lstat(`/${name}`).catch(() => undefined)
    if (stats?.isSymbolicLink()) links.set(`/${name}`, `usr/${name}`)
    else if (stats?.isDirectory()) links.set(`/${name}`, '')
  }
  return links
}

async function existing(paths: readonly string[]): Promise<string[]> {
  const found = await Promise.all(
    paths.map((path) =>
      lstat(path).then(
        () => path,
        () => undefined,
      ),
    ),
  )
  return found.filter((path): path is string => path !== undefined)
}

/**
 * `innerLimits`: rlimits applied to the command alone, inside the sandbox. RLIMIT_AS goes there when the
 * command runs behind the egress forwarder: Node cannot even start under an address-space limit.
 */
export async function bwrapArguments(
  options: BwrapOptions,
  request: SandboxRunRequest,
  innerLimits: readonly string[] = [],
): Promise<string[]> {
  const args = [
    '--unshare-all',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    '--uid',
    String(sandboxUid),
    '--gid',
    String(sandboxGid),
    '--hostname',
    'sandbox',
    '--ro-bind',
    '/usr',
    '/usr',
  ]
  for (const [path, target] of options.usrMergedLinks) {
    if (target) args.push('--symlink', target, path)
    else args.push('--ro-bind', path, path)
  }
  for (const path of await existing(hostEtcEntries)) args.push('--ro-bind', path, path)
  for (const name of ['passwd', 'group', 'hostname', 'hosts'])
    args.push('--ro-bind', join(options.etcDir, name), `/etc/${name}`)
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--bind', request.workspaceDir, '/workspace')
  args.push('--chdir', request.cwd ? `/workspace/${request.cwd}` : '/workspace', '--clearenv')
  const env = {
    PATH: sandboxPath,
    HOME: '/workspace',
    LANG: 'C.UTF-8',
    TMPDIR: '/tmp',
    USER: 'sandbox',
    ...request.env,
  }
  for (const [name, value] of Object.entries(env)) args.push('--setenv', name, value)
  const shell = ['/bin/sh', '-c', request.command]
  const command = innerLimits.length > 0 ? ['prlimit', ...innerLimits, '--', ...shell] : shell
  if (request.egressSocket && options.forwarder) {
    // The host's /usr and /lib are visible here: node needs only its binary and the script.
    for (const mount of forwarderMounts(options.forwarder, request.egressSocket, false))
      args.push('--ro-bind', mount.source, mount.target)
    args.push('--', ...forwarderArgv(options.forwarder, command, false))
  } else {
    args.push('--', ...command)
  }
  return args
}

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
    workspace: `${limits.workspaceBytes} bytes and ${limits.workspaceEntries} entries, checked every 250 ms`,
  }
  return {
    executor: 'bwrap',
    egress: options.forwarder !== undefined,
    status: (): SandboxStatus => ({ executor: 'bwrap', status: 'ok', enforced }),
    async run(request): Promise<SandboxRunResult> {
      const cgroup = await options.cgroups?.create({ memoryBytes: limits.memoryBytes, pids: limits.pids })
      try {
        const addressSpace = cgroup ? [] : [`--as=${limits.memoryBytes}`]
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
        const chain = [
          'prlimit',
          ...rlimits,
          '--',
          ...dropUser,
          options.bwrapPath,
          ...(await bwrapArguments(options, request, behindForwarder ? addressSpace : [])),
        ]
        const result = await runSandboxedChild(
          {
            file: '/bin/sh',
            args: ['-c', joinCgroupsScript, 'sh', ...(cgroup?.procsFiles ?? []), '--', ...chain],
            // bwrap is pid 1 of the sandbox: its own environment shows in /proc/1/environ, so it gets none.
            env: {},
          },
          request,
          limits,
        )
        const { killedFor, ...rest } = result
        const workspaceLimit = workspaceLimitOf(killedFor)
        return { ...rest, limitExceeded: (await cgroup?.limitHit()) ?? workspaceLimit }
      } finally {
        await cgroup?.remove()
      }
    },
  }
}

/** Runs `true` through the whole chain once; the error text says why bwrap cannot work here. */
export function probeBwrap(options: BwrapOptions, workDir: string): Promise<string | undefined> {
  return probeSandbox(createBwrapSandbox(options), workDir, options.sandboxUser, 10_000)
}
