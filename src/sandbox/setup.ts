import { access, mkdir, realpath } from 'node:fs/promises'
import { availableParallelism } from 'node:os'
import { delimiter, join, resolve } from 'node:path'
import type { Logger } from '../core/logger'
import type { Resolver } from '../net/node-http'
import { createEgressService } from './egress/egress-service'
import { type ForwarderRuntime, prepareForwarder } from './egress/forwarder'
import type { EgressSettings } from './egress/settings'
import {
  type BwrapOptions,
  createBwrapSandbox,
  findUsrMergedLinks,
  probeBwrap,
  probeBwrapOverlay,
} from './executors/bwrap'
import type { BwrapRelay } from './executors/bwrap-arguments'
import { probeCgroups } from './executors/cgroup'
import {
  type ContainerOptions,
  createContainerSandbox,
  engineEnvironment,
  missingImages,
  probeContainer,
} from './executors/container'
import { busyboxMount } from './executors/overlay'
import { createProcessSandbox } from './executors/process'
import type { Sandbox } from './executors/sandbox'
import { createLimiter } from './limiter'
import { createWorkerLister, type PolicyWorkerOptions } from './policy/command-lister'
import type { SandboxSettings } from './settings'
import { createShellService, type ShellService } from './shell-service'
import { claimWorkDir } from './work-dir-claim'

export interface ShellSetup {
  shell: ShellService | undefined
  /** Why there is no shell, in words an operator can act on. */
  problem: string | undefined
}

async function findProgram(name: string, env: Record<string, string | undefined>): Promise<string | undefined> {
  for (const folder of (env.PATH ?? '/usr/bin:/bin').split(delimiter)) {
    const candidate = join(folder, name)
    if (
      await access(candidate, 1 /* X_OK */).then(
        () => true,
        () => false,
      )
    )
      return candidate
  }
  return undefined
}

/** The egress of a shell: the operator's policy and limits, and the address-rule exceptions. */
export interface ShellEgressOptions {
  settings: EgressSettings
  /** TOOLPORT_FETCH_ALLOW_HOSTS. */
  trustedHosts: readonly string[]
  /** DNS for the proxy; tests inject answers. */
  resolve?: Resolver
}

/** The forwarder only where some call may get network: with the server's policy at none, nobody can. */
async function forwarderFor(
  egress: ShellEgressOptions | undefined,
  workDir: string,
): Promise<ForwarderRuntime | undefined> {
  if (!egress || egress.settings.policy.mode === 'none') return undefined
  return prepareForwarder(join(workDir, 'egress'))
}

/** Under bwrap: socat where installed (unless the operator asked for Node), else the Node forwarder. */
async function bwrapRelayFor(
  egress: ShellEgressOptions | undefined,
  env: Record<string, string | undefined>,
  workDir: string,
): Promise<BwrapRelay | undefined> {
  if (!egress || egress.settings.policy.mode === 'none') return undefined
  const socat = egress.settings.relay === 'auto' ? await findProgram('socat', env) : undefined
  if (socat) return { socat: await realpath(socat) }
  const forwarder = await forwarderFor(egress, workDir)
  return forwarder ? { forwarder } : undefined
}

async function createBwrap(
  settings: SandboxSettings,
  env: Record<string, string | undefined>,
  egress: ShellEgressOptions | undefined,
  log: Logger,
): Promise<Sandbox | string> {
  if (process.platform !== 'linux') return 'bubblewrap needs Linux'
  const bwrapPath = await findProgram('bwrap', env)
  if (!bwrapPath) return 'bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)'
  if (!(await findProgram('prlimit', env))) return 'prlimit (util-linux) is not installed'
  const root = process.getuid?.() === 0
  if (root && !(await findProgram('setpriv', env))) return 'setpriv (util-linux) is not installed'
  const workDir = resolve(settings.workDir)
  await mkdir(workDir, { recursive: true, mode: 0o711 })
  const options: BwrapOptions = {
    bwrapPath,
    limits: settings.limits,
    // As root, the sandbox drops to an unprivileged host uid: rlimits then apply and files it makes are not root's.
    sandboxUser: root ? settings.user : undefined,
    cgroups: await probeCgroups(),
    usrMergedLinks: await findUsrMergedLinks(),
    relay: await bwrapRelayFor(egress, env, workDir),
  }
  const failure = await probeBwrap(options, workDir)
  if (failure) return `bubblewrap cannot start a sandbox here: ${failure}`
  if (!settings.overlay)
    return createBwrapSandbox({ ...options, overlay: false, noOverlay: 'TOOLPORT_SHELL_OVERLAY=off' })
  if (!(await findProgram('unshare', env)))
    return createBwrapSandbox({ ...options, overlay: false, noOverlay: 'unshare (util-linux) is not installed' })
  // busybox first: the same mount without mount(8)'s libraries (overlay.ts); util-linux's where it fails.
  const busybox = await findProgram('busybox', env)
  const mountProgram = busybox && busyboxMount(busybox)
  if (mountProgram && (await probeBwrapOverlay({ ...options, mountProgram }, workDir)) === undefined)
    return createBwrapSandbox({ ...options, overlay: true, mountProgram })
  const noOverlay = await probeOverlay(options, workDir, log)
  return createBwrapSandbox({ ...options, overlay: noOverlay === undefined, ...(noOverlay ? { noOverlay } : {}) })
}

async function createContainer(
  settings: SandboxSettings,
  env: Record<string, string | undefined>,
  log: Logger,
  egress: ShellEgressOptions | undefined,
): Promise<Sandbox | string> {
  const container = settings.container
  if (!container) return 'TOOLPORT_SANDBOX=container needs TOOLPORT_CONTAINER_IMAGE'
  const enginePath = await findProgram(container.engine, env)
  if (!enginePath) return `${container.engine} is not installed (TOOLPORT_CONTAINER_ENGINE=${container.engine})`
  const workDir = resolve(settings.workDir)
  // The workspace copy is handed to the engine as a --mount source, whose syntax has no escaping.
  if (/[,:=]/.test(workDir)) return `TOOLPORT_WORK_DIR must not contain ",", ":" or "=" for containers: ${workDir}`
  await mkdir(workDir, { recursive: true, mode: 0o711 })
  const forwarder = container.network === 'none' ? await forwarderFor(egress, workDir) : undefined
  const unmountable = forwarder
    ? [
        forwarder.node,
        forwarder.script,
        ...(forwarder.loader ? [forwarder.loader.path] : []),
        ...forwarder.libraries.map((library) => library.path),
      ].find((path) => /[,:=]/.test(path))
    : undefined
  if (unmountable)
    return `the egress forwarder's file ${unmountable} has ",", ":" or "=" in its path, which --mount cannot express`
  if (forwarder && !forwarder.loader) {
    log.warn('the Node binary links no dynamic loader (ldd found none): the egress forwarder needs node in each image')
  }
  const ownUid = process.getuid?.() ?? 0
  const options: ContainerOptions = {
    engine: container.engine,
    enginePath,
    image: container.image,
    images: container.images,
    cpus: container.cpus,
    network: container.network,
    limits: settings.limits,
    // As root, commands run as the configured unprivileged uid; otherwise as the service's own.
    user: ownUid === 0 ? settings.user : { uid: ownUid, gid: process.getgid?.() ?? 0 },
    rootless: ownUid !== 0,
    engineEnv: engineEnvironment(env),
    scratchDir: workDir,
    forwarder,
  }
  const failure = await probeContainer(options, workDir)
  if (failure) return `${container.engine} cannot start a container here: ${failure}`
  // The default image was found by the probe; only the optional ones are left to check.
  const missing = await missingImages(
    options,
    options.images.filter((image) => image !== options.image),
  )
  if (missing.length > 0) {
    log.warn('TOOLPORT_CONTAINER_IMAGES names images the engine does not have; calls naming them fail', { missing })
  }
  return createContainerSandbox(options)
}

/**
 * Why runs cannot take an overlay here, if they cannot. The probe's own words (a mount error with host
 * paths) go to the log: the sandbox status is shown by the public /readyz.
 */
async function probeOverlay(options: BwrapOptions, workDir: string, log: Logger): Promise<string | undefined> {
  const failure = await probeBwrapOverlay(options, workDir)
  if (failure === undefined) return undefined
  log.warn('commands run over the workspace copy itself: no overlay could be mounted', { reason: failure })
  return 'the probe at start could not mount one (the log says why)'
}

/** Builds the shell service TOOLPORT_SANDBOX asks for; never an unsandboxed fallback. */
export async function setupShell(
  settings: SandboxSettings,
  env: Record<string, string | undefined>,
  log: Logger,
  options: { maxFileBytes: number; policyWorker?: PolicyWorkerOptions; egress?: ShellEgressOptions },
): Promise<ShellSetup> {
  if (settings.executor === 'none')
    return { shell: undefined, problem: 'TOOLPORT_SANDBOX=none: the operator disabled the sandbox' }
  const claimed = await claimWorkDir(resolve(settings.workDir))
  if (claimed) {
    log.warn('execute_command is unavailable', { reason: claimed })
    return { shell: undefined, problem: claimed }
  }
  const sandbox =
    settings.executor === 'process'
      ? createProcessSandbox(settings.limits, await findProgram('prlimit', env))
      : settings.executor === 'container'
        ? await createContainer(settings, env, log, options.egress)
        : await createBwrap(settings, env, options.egress, log)
  if (typeof sandbox === 'string') {
    log.warn('execute_command is unavailable', { reason: sandbox })
    return { shell: undefined, problem: sandbox }
  }
  const concurrency = settings.concurrency ?? availableParallelism()
  const workDir = resolve(settings.workDir)
  await mkdir(workDir, { recursive: true, mode: 0o711 })
  const status = sandbox.status()
  log.info('sandbox ready', { executor: status.executor, enforced: status.enforced, concurrency })
  const owner = sandbox.executor !== 'process' && process.getuid?.() === 0 ? settings.user : undefined
  const egressSettings = options.egress?.settings ?? {
    policy: { mode: 'none' as const },
    limits: { connections: 1, bytesIn: 1, bytesOut: 1, connectionSeconds: 1 },
  }
  const shell = createShellService({
    sandbox,
    limiter: createLimiter(concurrency, settings.queue ?? concurrency * 4),
    policy: {
      ...(settings.allow ? { allow: settings.allow } : {}),
      ...(settings.deny ? { deny: settings.deny } : {}),
      // Off the main thread where the runtime has the worker entry (the Node service): a hostile command
      // costs its check up to seconds of CPU, which must not stall every other call.
      ...((settings.allow || settings.deny) && options.policyWorker
        ? { lister: createWorkerLister(options.policyWorker) }
        : {}),
    },
    maxFileBytes: options.maxFileBytes,
    mirrorsRoot: sandbox.executor === 'process' ? undefined : join(workDir, 'workspaces'),
    reconcileMs: settings.reconcileSeconds * 1000,
    owner,
    workspaceLimits: { bytes: settings.limits.workspaceBytes, entries: settings.limits.workspaceEntries },
    egress: createEgressService({
      policy: egressSettings.policy,
      limits: egressSettings.limits,
      trustedHosts: options.egress?.trustedHosts ?? [],
      socketsDir: join(workDir, 'egress', 'sockets'),
      owner,
      ...(options.egress?.resolve ? { resolve: options.egress.resolve } : {}),
    }),
  })
  return { shell, problem: undefined }
}
