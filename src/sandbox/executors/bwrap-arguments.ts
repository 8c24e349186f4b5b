import { lstat } from 'node:fs/promises'
import { type ForwarderRuntime, forwarderArgv, forwarderMounts, scriptTarget, socketTarget } from '../egress/forwarder'
import { forwarderSource } from '../egress/forwarder-source'
import { socatRelayArgv, socatTarget } from '../egress/socat-relay'
import type { SandboxRunRequest } from './sandbox'

/**
 * bubblewrap's command line for one run. What the sandbox could learn of the host from it is kept
 * out of sight: the options travel through a pipe (`--args 3`), so /proc/1/cmdline shows only
 * `bwrap --args 3 -- <command>`, and the generated files (/etc/passwd, group, hosts, hostname, the
 * Node egress forwarder) are handed over as data (`--ro-bind-data`), so /proc/self/mountinfo names no
 * folder of the host for them. What mountinfo still shows is in SECURITY.md.
 */
export const sandboxUid = 1000
export const sandboxGid = 1000
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
const generatedEtc: Record<string, string> = {
  passwd: `root:x:0:0:root:/root:/bin/sh\nsandbox:x:${sandboxUid}:${sandboxGid}:sandbox:/workspace:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
  group: `root:x:0:\nsandbox:x:${sandboxGid}:\nnogroup:x:65534:\n`,
  hostname: 'sandbox\n',
  hosts: '127.0.0.1 localhost sandbox\n::1 localhost\n',
}

export interface BwrapLayout {
  /** Top-level host entries that are symlinks into /usr on this system (usrmerge): /bin, /lib, … */
  usrMergedLinks: ReadonlyMap<string, string>
  /** What relays a run's network to the proxy's socket; undefined: no run ever gets network. */
  relay: BwrapRelay | undefined
}

/** socat (egress/socat-relay.ts) where installed, else the service's own Node (egress/forwarder.ts). */
export type BwrapRelay = { socat: string } | { forwarder: ForwarderRuntime }

/** What to start: bwrap's own argv, and the data its descriptors 3, 4, … carry. */
export interface BwrapInvocation {
  args: string[]
  inputs: Uint8Array[]
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
 * command runs behind the Node egress forwarder: Node cannot even start under an address-space limit.
 */
export async function bwrapInvocation(
  layout: BwrapLayout,
  request: SandboxRunRequest,
  innerLimits: readonly string[] = [],
): Promise<BwrapInvocation> {
  const inputs: Uint8Array[] = []
  // Descriptor 3 is the argument list itself; the data files follow it.
  const dataFd = (content: string) => String(3 + inputs.push(new TextEncoder().encode(content)))
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
  for (const [path, target] of layout.usrMergedLinks) {
    if (target) args.push('--symlink', target, path)
    else args.push('--ro-bind', path, path)
  }
  for (const path of await existing(hostEtcEntries)) args.push('--ro-bind', path, path)
  for (const [name, content] of Object.entries(generatedEtc))
    args.push('--ro-bind-data', dataFd(content), `/etc/${name}`)
  args.push(
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--tmpfs',
    '/tmp',
    '--bind',
    request.overlay?.merged ?? request.workspaceDir,
    '/workspace',
  )
  for (const mount of request.mounts ?? []) args.push('--ro-bind', mount.host, mount.sandbox)
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
  // A shell command line, or an argv run as it is (command sources: no shell reads its elements).
  const program = request.argv ? [...request.argv] : ['/bin/sh', '-c', request.command]
  let command = innerLimits.length > 0 ? ['prlimit', ...innerLimits, '--', ...program] : program
  const { relay } = layout
  const socket = request.egressSocket
  if (socket && relay && 'socat' in relay) {
    args.push('--ro-bind', socket, socketTarget, '--ro-bind', relay.socat, socatTarget)
    command = socatRelayArgv(command)
  } else if (socket && relay && 'forwarder' in relay) {
    // The host's /usr and /lib are visible here: node needs only its binary, the script and the socket.
    for (const mount of forwarderMounts(relay.forwarder, socket, false, false))
      args.push('--ro-bind', mount.source, mount.target)
    args.push('--ro-bind-data', dataFd(forwarderSource), scriptTarget)
    command = forwarderArgv(relay.forwarder, command, false)
  }
  const packed = new TextEncoder().encode(args.map((arg) => `${arg}\0`).join(''))
  // The command itself must follow on the real command line (bwrap reads only options from --args).
  return { args: ['--args', '3', '--', ...command], inputs: [packed, ...inputs] }
}
