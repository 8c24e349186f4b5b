import { z } from 'zod'
import { ConfigError, commaList, defineSettings, positiveInteger, type SliceOf, variable } from '../core/settings'
import { imageReference, isImageReference } from './executors/container-image'

const programName = z.string().regex(/^[A-Za-z0-9._+-]{1,128}$/)

export interface ContainerSettings {
  engine: 'podman' | 'docker'
  /** Image every command runs in unless a call picks another from `images`. */
  image: string
  /** Images a call may pick with execute_command's `image` (the default image is always allowed). */
  images: string[]
  cpus: number
  /** Engine network mode; 'none' unless the operator opens it. */
  network: string
}

export const sandboxSettings = defineSettings({
  title: 'Shell sandbox',
  description:
    'How `execute_command` runs: a fresh sandbox per command over a copy of the workspace, with no network and only the workspace writable (docs/sandbox.md).',
  variables: {
    TOOLPORT_SANDBOX: variable({
      schema: z.enum(['auto', 'bwrap', 'process', 'container', 'none']),
      default: 'auto',
      runtimeDefaults: { lambda: 'process', workers: 'none' },
      fixedOn: { workers: 'Workers run no processes' },
      description:
        '`auto`/`bwrap` (bubblewrap), `container` (podman or Docker), `process` (Lambda only: each execution environment is the sandbox) or `none`.',
    }),
    TOOLPORT_WORK_DIR: variable({
      schema: z.string().min(1),
      default: './.toolport-work',
      runtimeDefaults: { lambda: '/tmp/toolport/work' },
      description:
        'Workspace copies for `execute_command` and generated sandbox files (never inside the storage folder). One folder serves one process: a second toolport process finding it in use runs without `execute_command` and says so.',
    }),
    TOOLPORT_SHELL_ALLOW: variable({
      schema: commaList(programName, 'not a program name', 'use names like git, python3').optional(),
      description:
        'Comma list of programs a command may run (command policy); while set, a command whose program is computed (`$CMD`) is refused.',
    }),
    TOOLPORT_SHELL_DENY: variable({
      schema: commaList(programName, 'not a program name', 'use names like git, python3').optional(),
      description: 'Comma list of programs a command may not run; deny wins over allow. A denied program is 403.',
    }),
    TOOLPORT_SHELL_DEFAULT_TIMEOUT_SECONDS: variable({
      schema: positiveInteger.max(3600),
      default: '30',
      description:
        "`execute_command`'s `timeout_seconds` when a call gives none (1-3600); the published schema shows it as the default. Reference 001's ShellTimeout; 000 uses 60.",
    }),
    TOOLPORT_SHELL_MAX_OUTPUT_BYTES: variable({
      schema: positiveInteger.max(16 * 1024 * 1024),
      default: String(64 * 1024),
      description: 'stdout and stderr kept per command (head and tail).',
    }),
    TOOLPORT_SHELL_CONCURRENCY: variable({
      schema: positiveInteger.max(1024).optional(),
      description: 'Commands running at once; more wait in a queue. Unset: one per CPU.',
    }),
    TOOLPORT_SHELL_QUEUE: variable({
      schema: z.coerce.number().int().min(0).max(100_000).optional(),
      description: 'Commands that may wait for a slot; past it, 429 with `Retry-After`. Unset: 4 × concurrency.',
    }),
    TOOLPORT_SHELL_MEMORY_BYTES: variable({
      schema: positiveInteger.min(16 * 1024 * 1024),
      default: String(512 * 1024 * 1024),
      description: 'Memory of one command (a cgroup, or `--memory` in a container).',
    }),
    TOOLPORT_SHELL_PIDS: variable({
      schema: positiveInteger.min(8),
      default: '256',
      description: 'Processes of one command.',
    }),
    TOOLPORT_SHELL_FILE_BYTES: variable({
      schema: positiveInteger,
      default: String(1024 * 1024 * 1024),
      description: 'Largest file a command may write (`RLIMIT_FSIZE`).',
    }),
    TOOLPORT_SHELL_OPEN_FILES: variable({
      schema: positiveInteger.min(16),
      default: '1024',
      description: 'Open files of one process (`RLIMIT_NOFILE`).',
    }),
    TOOLPORT_SHELL_WORKSPACE_BYTES: variable({
      schema: positiveInteger,
      default: String(2 * 1024 * 1024 * 1024),
      description: 'Size the workspace may reach during a command.',
    }),
    TOOLPORT_SHELL_WORKSPACE_ENTRIES: variable({
      schema: positiveInteger,
      default: '100000',
      description: 'Files and folders the workspace may hold during a command.',
    }),
    TOOLPORT_SHELL_RECONCILE_SECONDS: variable({
      schema: z.coerce.number().int().min(0).max(86_400),
      default: '60',
      description:
        "Longest a workspace copy is trusted on toolport's change markers alone before storage is listed in full again, for programs that write the bucket without toolport (docs/sandbox.md). `0`: list on every command.",
    }),
    TOOLPORT_SHELL_OVERLAY: variable({
      schema: z.enum(['auto', 'off']),
      default: 'auto',
      description:
        '`auto`: with bubblewrap, a command runs over an overlay of the workspace copy when the kernel allows an unprivileged one (Linux 5.11+), so the sync reads only what it wrote; `off`: over the copy itself, walked in full after each command (docs/sandbox.md).',
    }),
    TOOLPORT_SANDBOX_UID: variable({
      schema: z.coerce.number().int().min(1).max(4_294_967_294),
      default: '65534',
      description: 'Host uid commands run as when toolport runs as root.',
    }),
    TOOLPORT_SANDBOX_GID: variable({
      schema: z.coerce.number().int().min(1).max(4_294_967_294),
      default: '65534',
      description: 'Host gid commands run as when toolport runs as root.',
    }),
    TOOLPORT_CONTAINER_ENGINE: variable({
      schema: z.enum(['podman', 'docker']),
      default: 'podman',
      description:
        'With `TOOLPORT_SANDBOX=container`: `podman` or `docker`, found on `PATH` (`CONTAINER_HOST`/`DOCKER_HOST` reach a remote socket).',
    }),
    TOOLPORT_CONTAINER_IMAGE: variable({
      schema: z.string().max(255).regex(imageReference, 'must be an image reference such as python:3.12').optional(),
      description:
        'Required with `TOOLPORT_SANDBOX=container`: the image every command runs in unless a call picks another.',
    }),
    TOOLPORT_CONTAINER_IMAGES: variable({
      schema: commaList(
        z.string().refine(isImageReference),
        'not an image reference',
        'use references such as python:3.12',
      ),
      description: 'Comma list of further images a call may name in `image`; anything else is 400 with the list.',
    }),
    TOOLPORT_CONTAINER_CPUS: variable({
      schema: z.coerce.number().positive().max(1024),
      default: '1',
      description: '`--cpus` of each container.',
    }),
    TOOLPORT_CONTAINER_NETWORK: variable({
      schema: z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,62}$/i, 'must be an engine network name such as none or bridge'),
      default: 'none',
      description: 'Engine network of each container; anything but `none` gives commands a network.',
    }),
  },
  build(values) {
    const executor = values.TOOLPORT_SANDBOX
    let container: ContainerSettings | undefined
    if (executor === 'container') {
      const image = values.TOOLPORT_CONTAINER_IMAGE
      if (!image) {
        throw new ConfigError(
          'TOOLPORT_SANDBOX=container needs TOOLPORT_CONTAINER_IMAGE: the image commands run in (built or pulled beforehand).',
        )
      }
      container = {
        engine: values.TOOLPORT_CONTAINER_ENGINE,
        image,
        images: [...new Set([image, ...values.TOOLPORT_CONTAINER_IMAGES])],
        cpus: values.TOOLPORT_CONTAINER_CPUS,
        network: values.TOOLPORT_CONTAINER_NETWORK,
      }
    }
    return {
      executor,
      workDir: values.TOOLPORT_WORK_DIR,
      /** Programs a command may (allow) or may not (deny) run; undefined: no list. */
      allow: values.TOOLPORT_SHELL_ALLOW,
      deny: values.TOOLPORT_SHELL_DENY,
      /** execute_command's timeout_seconds when a call gives none. */
      defaultTimeoutSeconds: values.TOOLPORT_SHELL_DEFAULT_TIMEOUT_SECONDS,
      /** Parallel commands; undefined means one per CPU (decided by the runtime). */
      concurrency: values.TOOLPORT_SHELL_CONCURRENCY,
      queue: values.TOOLPORT_SHELL_QUEUE,
      limits: {
        memoryBytes: values.TOOLPORT_SHELL_MEMORY_BYTES,
        pids: values.TOOLPORT_SHELL_PIDS,
        fileBytes: values.TOOLPORT_SHELL_FILE_BYTES,
        openFiles: values.TOOLPORT_SHELL_OPEN_FILES,
        maxOutputBytes: values.TOOLPORT_SHELL_MAX_OUTPUT_BYTES,
        workspaceBytes: values.TOOLPORT_SHELL_WORKSPACE_BYTES,
        workspaceEntries: values.TOOLPORT_SHELL_WORKSPACE_ENTRIES,
      },
      /** Longest a workspace copy is trusted on change markers alone; 0: list storage on every command. */
      reconcileSeconds: values.TOOLPORT_SHELL_RECONCILE_SECONDS,
      /** Run commands over an overlay of the copy where bubblewrap can (executors/overlay.ts). */
      overlay: values.TOOLPORT_SHELL_OVERLAY === 'auto',
      /** Host uid/gid the sandbox runs as when the service runs as root. */
      user: { uid: values.TOOLPORT_SANDBOX_UID, gid: values.TOOLPORT_SANDBOX_GID },
      container,
    }
  },
})

export type SandboxSettings = SliceOf<typeof sandboxSettings>
