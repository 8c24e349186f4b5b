import { access, mkdir } from 'node:fs/promises'
import { availableParallelism } from 'node:os'
import { delimiter, join, resolve } from 'node:path'
import type { Config } from '../config/config'
import type { Logger } from '../tools/tool'
import {
  type BwrapOptions,
  createBwrapSandbox,
  findUsrMergedLinks,
  probeBwrap,
  type SandboxLimits,
  writeSandboxEtc,
} from './executors/bwrap'
import { probeCgroups } from './executors/cgroup'
import {
  type ContainerOptions,
  createContainerSandbox,
  engineEnvironment,
  missingImages,
  probeContainer,
} from './executors/container'
import { createProcessSandbox } from './executors/process'
import type { Sandbox } from './executors/sandbox'
import { createLimiter } from './limiter'
import { createWorkerLister, type PolicyWorkerOptions } from './policy/command-lister'
import { createShellService, type ShellService } from './shell-service'

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

function limitsOf(config: Config): SandboxLimits {
  const { shell } = config
  return {
    memoryBytes: shell.memoryBytes,
    pids: shell.pids,
    fileBytes: shell.fileBytes,
    openFiles: shell.openFiles,
    maxOutputBytes: shell.maxOutputBytes,
    workspaceBytes: shell.workspaceBytes,
    workspaceEntries: shell.workspaceEntries,
  }
}

async function createBwrap(config: Config, env: Record<string, string | undefined>): Promise<Sandbox | string> {
  if (process.platform !== 'linux') return 'bubblewrap needs Linux'
  const bwrapPath = await findProgram('bwrap', env)
  if (!bwrapPath) return 'bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)'
  if (!(await findProgram('prlimit', env))) return 'prlimit (util-linux) is not installed'
  const root = process.getuid?.() === 0
  if (root && !(await findProgram('setpriv', env))) return 'setpriv (util-linux) is not installed'
  const workDir = resolve(config.shell.workDir)
  await mkdir(workDir, { recursive: true, mode: 0o711 })
  const etcDir = join(workDir, 'etc')
  await writeSandboxEtc(etcDir)
  const options: BwrapOptions = {
    bwrapPath,
    limits: limitsOf(config),
    // As root, the sandbox drops to an unprivileged host uid: rlimits then apply and files it makes are not root's.
    sandboxUser: root ? { uid: config.shell.uid, gid: config.shell.gid } : undefined,
    cgroups: await probeCgroups(),
    etcDir,
    usrMergedLinks: await findUsrMergedLinks(),
  }
  const failure = await probeBwrap(options, workDir)
  return failure ? `bubblewrap cannot start a sandbox here: ${failure}` : createBwrapSandbox(options)
}

async function createContainer(
  config: Config,
  env: Record<string, string | undefined>,
  log: Logger,
): Promise<Sandbox | string> {
  const container = config.container
  if (!container) return 'TOOLPORT_SANDBOX=container needs TOOLPORT_CONTAINER_IMAGE'
  const enginePath = await findProgram(container.engine, env)
  if (!enginePath) return `${container.engine} is not installed (TOOLPORT_CONTAINER_ENGINE=${container.engine})`
  const workDir = resolve(config.shell.workDir)
  // The workspace copy is handed to the engine as a --mount source, whose syntax has no escaping.
  if (/[,:=]/.test(workDir)) return `TOOLPORT_WORK_DIR must not contain ",", ":" or "=" for containers: ${workDir}`
  await mkdir(workDir, { recursive: true, mode: 0o711 })
  const ownUid = process.getuid?.() ?? 0
  const options: ContainerOptions = {
    engine: container.engine,
    enginePath,
    image: container.image,
    images: container.images,
    cpus: container.cpus,
    network: container.network,
    limits: limitsOf(config),
    // As root, commands run as the configured unprivileged uid; otherwise as the service's own.
    user:
      ownUid === 0 ? { uid: config.shell.uid, gid: config.shell.gid } : { uid: ownUid, gid: process.getgid?.() ?? 0 },
    rootless: ownUid !== 0,
    engineEnv: engineEnvironment(env),
    scratchDir: workDir,
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

/** Builds the shell service TOOLPORT_SANDBOX asks for; never an unsandboxed fallback. */
export async function setupShell(
  config: Config,
  env: Record<string, string | undefined>,
  log: Logger,
  options: { policyWorker?: PolicyWorkerOptions } = {},
): Promise<ShellSetup> {
  if (config.sandbox === 'none')
    return { shell: undefined, problem: 'TOOLPORT_SANDBOX=none: the operator disabled the sandbox' }
  const sandbox =
    config.sandbox === 'process'
      ? createProcessSandbox(limitsOf(config), await findProgram('prlimit', env))
      : config.sandbox === 'container'
        ? await createContainer(config, env, log)
        : await createBwrap(config, env)
  if (typeof sandbox === 'string') {
    log.warn('execute_command is unavailable', { reason: sandbox })
    return { shell: undefined, problem: sandbox }
  }
  const concurrency = config.shell.concurrency ?? availableParallelism()
  const workDir = resolve(config.shell.workDir)
  await mkdir(workDir, { recursive: true, mode: 0o711 })
  const status = sandbox.status()
  log.info('sandbox ready', { executor: status.executor, enforced: status.enforced, concurrency })
  const shell = createShellService({
    sandbox,
    limiter: createLimiter(concurrency, config.shell.queue ?? concurrency * 4),
    policy: {
      ...(config.shell.allow ? { allow: config.shell.allow } : {}),
      ...(config.shell.deny ? { deny: config.shell.deny } : {}),
      // Off the main thread where the runtime has the worker entry (the Node service): a hostile command
      // costs its check up to seconds of CPU, which must not stall every other call.
      ...((config.shell.allow || config.shell.deny) && options.policyWorker
        ? { lister: createWorkerLister(options.policyWorker) }
        : {}),
    },
    maxFileBytes: config.maxFileBytes,
    mirrorsRoot: sandbox.executor === 'process' ? undefined : join(workDir, 'workspaces'),
    owner:
      sandbox.executor !== 'process' && process.getuid?.() === 0
        ? { uid: config.shell.uid, gid: config.shell.gid }
        : undefined,
  })
  return { shell, problem: undefined }
}
