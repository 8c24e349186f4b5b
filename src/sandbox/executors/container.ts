import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { access, mkdtemp, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { type ForwarderRuntime, forwarderArgv, forwarderMounts } from '../egress/forwarder'
import type { Sandbox, SandboxLimits, SandboxRunRequest, SandboxRunResult, SandboxStatus } from './sandbox'
import { probeSandbox, runSandboxedChild, workspaceLimitOf } from './sandboxed-child'

/**
 * The `container` executor: each command runs in a fresh container of an operator-chosen image
 * (`run --rm`), through the engine's CLI. The workspace copy is bind-mounted at /workspace; the root
 * filesystem is read-only, /tmp a size-capped tmpfs, no network unless the operator opens one, no
 * capabilities, no-new-privileges, a non-root user, and memory/pids/CPU limits set on the container.
 */
export interface ContainerOptions {
  engine: 'podman' | 'docker'
  enginePath: string
  /** The default image, and every image a call may pick (the default included). */
  image: string
  images: readonly string[]
  cpus: number
  network: string
  limits: SandboxLimits
  /** Host uid/gid commands run as: the owner of the workspace copy, never root. */
  user: { uid: number; gid: number }
  /** The service is not root: podman then runs rootless. */
  rootless: boolean
  /** The engine CLI's own environment (socket and config locations); nothing of it enters a container. */
  engineEnv: Record<string, string>
  /** Folder for each run's private working folder of the engine CLI (see run()). */
  scratchDir: string
  /** The egress forwarder (only with network "none"); undefined: no run ever gets network. */
  forwarder: ForwarderRuntime | undefined
}

// Names of variables the engine CLI itself may need to find its socket, storage and configuration.
const engineVariables = [
  'PATH',
  'HOME',
  'TMPDIR',
  'XDG_RUNTIME_DIR',
  'XDG_CONFIG_HOME',
  'XDG_DATA_HOME',
  'DOCKER_HOST',
  'DOCKER_CONFIG',
  'DOCKER_CONTEXT',
  'CONTAINER_HOST',
  'CONTAINERS_CONF',
  'CONTAINERS_STORAGE_CONF',
  'CONTAINERS_REGISTRIES_CONF',
]

export function engineEnvironment(env: Record<string, string | undefined>): Record<string, string> {
  const picked: Record<string, string> = {}
  for (const name of engineVariables) {
    const value = env[name]
    if (value) picked[name] = value
  }
  picked.PATH ??= '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
  return picked
}

export function containerArguments(options: ContainerOptions, request: SandboxRunRequest, name: string): string[] {
  const { limits } = options
  const env = { HOME: '/workspace', LANG: 'C.UTF-8', TMPDIR: '/tmp', USER: 'sandbox', ...request.env }
  // A shell command line, or an argv run as it is (command sources: no shell reads its elements).
  const shell = request.argv ? [...request.argv] : ['/bin/sh', '-c', request.command]
  // Behind the forwarder, started through its own loader and libraries: the image may have no Node.
  const forwarder = request.egressSocket && options.forwarder ? options.forwarder : undefined
  const [entrypoint = '/bin/sh', ...commandArgs] = forwarder ? forwarderArgv(forwarder, shell, true) : shell
  const egressMounts =
    forwarder && request.egressSocket
      ? forwarderMounts(forwarder, request.egressSocket, true).flatMap((mount) => [
          '--mount',
          `type=bind,source=${mount.source},target=${mount.target},readonly`,
        ])
      : []
  return [
    'run',
    '--rm',
    '--name',
    name,
    '--label',
    'io.toolport.run=true',
    // Images are the operator's choice, prepared beforehand: a call never makes the engine pull.
    '--pull',
    'never',
    // Output reaches us through the attached streams; a log copy would only fill the engine's disk.
    '--log-driver',
    'none',
    '--network',
    options.network,
    '--hostname',
    'sandbox',
    '--read-only',
    '--tmpfs',
    `/tmp:rw,nosuid,nodev,size=${limits.memoryBytes},mode=1777`,
    '--cap-drop',
    'all',
    '--security-opt',
    'no-new-privileges',
    '--user',
    `${options.user.uid}:${options.user.gid}`,
    '--memory',
    String(limits.memoryBytes),
    // Equal to --memory: no swap on top of the memory limit.
    '--memory-swap',
    String(limits.memoryBytes),
    '--pids-limit',
    String(limits.pids),
    '--cpus',
    String(options.cpus),
    '--ulimit',
    `fsize=${limits.fileBytes}:${limits.fileBytes}`,
    '--ulimit',
    `nofile=${limits.openFiles}:${limits.openFiles}`,
    // Engines fill in their own (high) defaults for every rlimit not named, which runc then fails to set
    // above the host's hard limits: name them all. NPROC counts a host uid's processes across runs.
    '--ulimit',
    `nproc=${limits.pids * 8}:${limits.pids * 8}`,
    '--ulimit',
    'core=0:0',
    // podman adds the host's /etc/hosts entries and TERM/container variables: a command needs none of them.
    ...(options.engine === 'podman' ? ['--no-hosts', '--unsetenv', 'TERM', '--unsetenv', 'container'] : []),
    // Rootless podman maps container uids to subordinate ones: keep-id maps --user to the service's own uid.
    ...(options.engine === 'podman' && options.rootless ? ['--userns', 'keep-id'] : []),
    '--mount',
    `type=bind,source=${request.workspaceDir},target=/workspace`,
    ...egressMounts,
    '--workdir',
    request.cwd ? `/workspace/${request.cwd}` : '/workspace',
    ...Object.entries(env).flatMap(([key, value]) => ['--env', `${key}=${value}`]),
    ...(request.mounts ?? []).flatMap((mount) => [
      '--mount',
      `type=bind,source=${mount.host},target=${mount.sandbox},readonly`,
    ]),
    '--entrypoint',
    entrypoint,
    request.image ?? options.image,
    ...commandArgs,
  ]
}

function forceRemove(options: ContainerOptions, name: string, cwd: string): Promise<void> {
  const args =
    options.engine === 'podman' ? ['rm', '--force', '--time', '0', '--ignore', name] : ['rm', '--force', name]
  return new Promise((resolve) => {
    // A container that already went with --rm makes docker complain; either way it is gone.
    execFile(options.enginePath, args, { env: options.engineEnv, cwd, timeout: 60_000 }, () => resolve())
  })
}

function containerExists(options: ContainerOptions, name: string, cwd: string): Promise<boolean> {
  const args =
    options.engine === 'podman' ? ['container', 'exists', name] : ['container', 'inspect', '--format', '.', name]
  return new Promise((resolve) => {
    execFile(options.enginePath, args, { env: options.engineEnv, cwd, timeout: 60_000 }, (error) => resolve(!error))
  })
}

// A create the killed CLI asked for may still be on its way in the engine: removal is confirmed this often.
const absentChecks = 3
const checkEveryMs = 300
const removalDeadlineMs = 20_000

/**
 * Removes a container whose CLI was killed, and makes sure it stays gone: an engine still creating it
 * when the CLI died finishes the create afterwards (docker under load leaves it "Created", never started
 * and so never removed by --rm). Removed again until it is absent several checks in a row.
 */
async function removeContainer(options: ContainerOptions, name: string, cwd: string): Promise<void> {
  const deadline = Date.now() + removalDeadlineMs
  let absent = 0
  while (absent < absentChecks && Date.now() < deadline) {
    await forceRemove(options, name, cwd)
    absent = (await containerExists(options, name, cwd)) ? 0 : absent + 1
    if (absent < absentChecks) await new Promise((resolve) => setTimeout(resolve, checkEveryMs))
  }
}

/** podman's monitor (conmon) writes an empty file named `oom` into its working folder when the kernel OOM-kills the container. */
async function oomKilled(options: ContainerOptions, folder: string): Promise<boolean> {
  if (options.engine !== 'podman') return false
  return access(join(folder, 'oom')).then(
    () => true,
    () => false,
  )
}

export function createContainerSandbox(options: ContainerOptions): Sandbox {
  const { limits } = options
  const enforced: Record<string, string> = {
    isolation: `${options.engine} container per command (image ${options.image}): read-only root, private /tmp, own pid, ipc, uts and mount namespaces`,
    network:
      options.network !== 'none'
        ? `engine network "${options.network}"`
        : options.forwarder
          ? "--network none; calls with egress reach only toolport's proxy (a Unix socket bound into the container)"
          : 'none (--network none)',
    user: `host uid ${options.user.uid}; all capabilities dropped; no-new-privileges`,
    memory: `${options.engine} --memory ${limits.memoryBytes} bytes, no swap${options.engine === 'podman' ? '; OOM kills reported' : ''}`,
    processes: `${options.engine} --pids-limit ${limits.pids}`,
    cpu: `${options.engine} --cpus ${options.cpus}`,
    file_size: `RLIMIT_FSIZE ${limits.fileBytes} bytes`,
    open_files: `RLIMIT_NOFILE ${limits.openFiles}`,
    workspace: `${limits.workspaceBytes} bytes and ${limits.workspaceEntries} entries: sampled every 250 ms, counted at any depth once the command ended; past them nothing is synced`,
    images: options.images.join(', '),
  }
  return {
    executor: 'container',
    images: options.images,
    egress: options.forwarder !== undefined && options.network === 'none',
    status: (): SandboxStatus => ({ executor: 'container', status: 'ok', enforced }),
    async run(request): Promise<SandboxRunResult> {
      const name = `toolport-${randomUUID()}`
      // Each run's CLI works in a folder of its own: podman's monitor drops its OOM marker there, which
      // tells a memory kill apart from any other SIGKILL (and keeps it out of the service's folder).
      const scratch = await mkdtemp(join(options.scratchDir, 'run-'))
      try {
        let result: Awaited<ReturnType<typeof runSandboxedChild>>
        try {
          result = await runSandboxedChild(
            {
              file: options.enginePath,
              args: containerArguments(options, request, name),
              env: options.engineEnv,
              cwd: scratch,
            },
            request,
            limits,
          )
        } catch (error) {
          await removeContainer(options, name, scratch)
          throw error
        }
        const { killedFor, ...rest } = result
        // Killing the CLI leaves the container to the engine's monitor: remove it before answering.
        if (killedFor) await removeContainer(options, name, scratch)
        const memory = (await oomKilled(options, scratch)) ? 'memory' : undefined
        return { ...rest, limitExceeded: memory ?? workspaceLimitOf(killedFor) }
      } finally {
        await rm(scratch, { recursive: true, force: true })
      }
    },
  }
}

function engineOutput(options: ContainerOptions, args: string[]): Promise<{ ok: boolean; text: string }> {
  return new Promise((resolve) => {
    execFile(options.enginePath, args, { env: options.engineEnv, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ ok: !error, text: `${stderr}${stdout}`.trim() || (error?.message ?? '') }),
    )
  })
}

/** Those of `images` the engine does not have (toolport never pulls while serving). */
export async function missingImages(options: ContainerOptions, images: readonly string[]): Promise<string[]> {
  const missing: string[] = []
  for (const image of images) {
    const args =
      options.engine === 'podman' ? ['image', 'exists', image] : ['image', 'inspect', '--format', '{{.Id}}', image]
    if (!(await engineOutput(options, args)).ok) missing.push(image)
  }
  return missing
}

/** Runs `true` in the default image once; the text says why containers cannot work here. */
export async function probeContainer(options: ContainerOptions, workDir: string): Promise<string | undefined> {
  const version = await engineOutput(options, ['version'])
  if (!version.ok) return `${options.engine} does not answer: ${version.text}`
  if ((await missingImages(options, [options.image])).length > 0) {
    return `image ${options.image} is not available to ${options.engine}; build or pull it first (${options.engine} pull ${options.image}): toolport never pulls while serving`
  }
  return probeSandbox(createContainerSandbox(options), workDir, options.user, 60_000)
}
