import { chown, lstat, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { ToolError } from '../core/errors'
import { inSpan, type TraceSpan } from '../core/tracing'
import type { ObjectStore } from '../storage/store'
import type { EgressRun, EgressService } from './egress/egress-service'
import type { EgressLayer } from './egress/target'
import type {
  OutputStream,
  Sandbox,
  SandboxProcess,
  SandboxRunResult,
  SandboxStatus,
  StagedFiles,
} from './executors/sandbox'
import type { Limiter } from './limiter'
import { createWorkspaceMirrors, type WorkspaceMirrors } from './mirror/mirror'
import { removeTree } from './mirror/tree'
import type { FileChange, SkippedFile } from './mirror/types'
import type { CommandPolicy } from './policy/policy'

export interface ShellRequest {
  storage: ObjectStore
  /** The caller's tenant (egress metrics). */
  tenant: string
  workspacePrefix: string
  command: string
  /** Run this program with these arguments instead of `command` through /bin/sh -c. */
  argv?: readonly string[]
  stdin?: string
  /** Host folders the program sees read-only (operator-configured command sources). */
  mounts?: ReadonlyArray<{ host: string; sandbox: string }>
  /** Normalized workspace-relative folder ('' for the root). */
  cwd: string
  /** Container image to run in; only with the container executor, and only one it allows. */
  image?: string
  timeoutMs: number
  signal: AbortSignal
  onOutput?: (stream: OutputStream, text: string) => void
  /**
   * The egress policies that apply, outermost first (server, key, call), each already checked to be
   * within the one before it. Unset or ending in none: no network.
   */
  egress?: readonly EgressLayer[]
  /** The call's span: the queue, the checkout, the run and the commit are its children. */
  span?: TraceSpan | undefined
}

export interface ShellResult extends SandboxRunResult {
  filesChanged: FileChange[]
  skipped: SkippedFile[]
  /** Objects fetched from storage before the run (0 when the local copy was current). */
  downloaded: number
  /** What the command contacted through the egress proxy; unset when it had no network. */
  egress?: EgressRun<unknown>['report']
  /** The command left the workspace past a limit: none of its changes were saved, the copy is back to storage's. */
  discarded?: boolean
}

/** A long-lived sandboxed program (a stdio MCP server): its own scratch folder is its /workspace. */
export interface ProcessStartRequest {
  argv: readonly string[]
  env: Record<string, string>
  image?: string | undefined
  mounts: ReadonlyArray<{ host: string; sandbox: string }>
  /**
   * Network as the server's egress policy (TOOLPORT_SHELL_EGRESS) allows, counted for this tenant (a
   * worker source's); unset: none at all (a stdio MCP server).
   */
  egress?: { tenant: string }
}

/** What the execute_command tool sees: run a command over a workspace, with sync both ways. */
export interface ShellService {
  status(): SandboxStatus
  readonly limiter: Limiter
  readonly policy: CommandPolicy
  /** The operator's egress policy and limits, and the per-tenant counts. */
  readonly egress: EgressService
  /**
   * 'proxy': commands have no network but what the egress policy opens through toolport's proxy.
   * 'host': the process executor (Lambda), whose commands have the host's network; no policy applies.
   */
  readonly network: 'proxy' | 'host'
  execute(request: ShellRequest): Promise<ShellResult>
  /** Starts a long-lived program; absent where the executor cannot keep one. */
  start?(request: ProcessStartRequest): Promise<SandboxProcess>
  /** Stops what the sandbox keeps ready between runs (at shutdown). */
  close(): Promise<void>
}

export interface ShellServiceOptions {
  sandbox: Sandbox
  limiter: Limiter
  policy: CommandPolicy
  maxFileBytes: number
  /** Persistent workspace copies (bwrap); undefined means a fresh copy per call, removed after (process). */
  mirrorsRoot: string | undefined
  /**
   * With mirrorsRoot: longest a copy is trusted on its change marker alone before a full listing
   * (mirror/freshness.ts); 0 or unset: every call lists storage and walks the copy.
   */
  reconcileMs?: number
  owner: { uid: number; gid: number } | undefined
  egress: EgressService
  /** The workspace's size and entry limits, checked once more before anything is synced back. */
  workspaceLimits: { bytes: number; entries: number }
}

async function assertFolder(root: string, cwd: string): Promise<void> {
  let current = root
  for (const segment of cwd === '' ? [] : cwd.split('/')) {
    current = join(current, segment)
    const stats = await lstat(current).catch(() => undefined)
    if (!stats?.isDirectory()) {
      throw new ToolError('validation', `working_directory "${cwd}" is not a folder of the workspace.`, {
        hint: 'Use an existing folder relative to the workspace root (list_files shows them), or omit working_directory.',
        details: { field: 'working_directory' },
      })
    }
  }
}

function assertImage(sandbox: Sandbox, image: string | undefined): void {
  if (image === undefined) return
  if (!sandbox.images) {
    throw new ToolError(
      'validation',
      `image "${image}" cannot be used: this server runs commands with ${sandbox.executor}, not in containers.`,
      {
        hint: 'Omit image; commands run with the programs the server provides.',
        details: { field: 'image' },
      },
    )
  }
  if (!sandbox.images.includes(image)) {
    throw new ToolError('validation', `image "${image}" is not one this server allows.`, {
      hint: `Omit image for the default, or pick one of: ${sandbox.images.join(', ')}.`,
      details: { field: 'image', allowed: sandbox.images },
    })
  }
}

export function createShellService(options: ShellServiceOptions): ShellService {
  const persistent = options.mirrorsRoot
    ? createWorkspaceMirrors({
        root: options.mirrorsRoot,
        maxFileBytes: options.maxFileBytes,
        ...(options.owner ? { owner: options.owner } : {}),
        ...(options.reconcileMs ? { changeMarkers: { reconcileMs: options.reconcileMs } } : {}),
        ...(options.sandbox.overlays ? { overlays: options.sandbox.overlays } : {}),
      })
    : undefined

  async function withMirrors<T>(use: (mirrors: WorkspaceMirrors) => Promise<T>): Promise<T> {
    if (persistent) return use(persistent)
    // No filesystem isolation (process executor): never leave one tenant's files where the next call could read them.
    const root = await mkdtemp(join(tmpdir(), 'toolport-workspace-'))
    try {
      return await use(createWorkspaceMirrors({ root, maxFileBytes: options.maxFileBytes }))
    } finally {
      // At any depth: a command can nest folders past PATH_MAX, where rm with full paths fails.
      await removeTree(root)
    }
  }

  /**
   * A long-lived program, with the server's egress policy when it asks for network (request.egress) and
   * the operator opened some: the proxy channel stays open as long as the program runs.
   */
  const startProcess = async (request: ProcessStartRequest): Promise<SandboxProcess> => {
    if (!request.egress || !options.sandbox.egress || options.egress.policy.mode === 'none') {
      return launchProcess(request, undefined)
    }
    const tenant = request.egress.tenant
    return new Promise<SandboxProcess>((resolve, reject) => {
      options.egress
        .around(tenant, [], async (channel) => {
          const started = await launchProcess(request, channel?.socketPath).catch((error: unknown) => {
            reject(error)
            return undefined
          })
          if (!started) return
          resolve(started)
          await started.exited
        })
        .catch(reject)
    })
  }

  const launchProcess = async (
    request: ProcessStartRequest,
    egressSocket: string | undefined,
  ): Promise<SandboxProcess> => {
    const start = options.sandbox.start?.bind(options.sandbox)
    if (!start) throw new Error(`the ${options.sandbox.executor} sandbox cannot keep a process running`)
    assertImage(options.sandbox, request.image)
    // Beside the workspace copies, never inside one: each process gets an empty folder of its own.
    const parent = options.mirrorsRoot
      ? join(options.mirrorsRoot, '..', 'processes')
      : join(tmpdir(), 'toolport-processes')
    await mkdir(parent, { recursive: true, mode: 0o711 })
    const scratch = await mkdtemp(join(parent, 'process-'))
    if (options.owner) await chown(scratch, options.owner.uid, options.owner.gid)
    try {
      const started = await start({
        argv: request.argv,
        workspaceDir: scratch,
        cwd: '',
        env: request.env,
        ...(request.image ? { image: request.image } : {}),
        mounts: request.mounts,
        ...(egressSocket ? { egressSocket } : {}),
      })
      void started.exited.then(() => removeTree(scratch))
      return { ...started, stage: (files) => stageFiles(scratch, files) }
    } catch (error) {
      await removeTree(scratch)
      throw error
    }
  }

  return {
    limiter: options.limiter,
    policy: options.policy,
    egress: options.egress,
    network: options.sandbox.executor === 'process' ? 'host' : 'proxy',
    status: () => options.sandbox.status(),
    ...(options.sandbox.start ? { start: startProcess } : {}),
    close: async () => {
      await options.sandbox.close?.()
    },
    async execute(request) {
      assertImage(options.sandbox, request.image)
      const { span } = request
      const release = await inSpan(span, 'sandbox queue', {}, () => options.limiter.acquire(request.signal))
      try {
        return await withMirrors(async (mirrors) => {
          const checkout = await inSpan(span, 'workspace checkout', {}, async (child) => {
            const done = await mirrors.checkout(request.storage, request.workspacePrefix, request.signal)
            child.setAttributes({ 'toolport.objects.downloaded': done.downloaded })
            return done
          })
          try {
            await assertFolder(checkout.dir, request.cwd)
            // Only a sandbox that can route through the proxy ever gets a session (and so any network).
            const layers = options.sandbox.egress ? (request.egress ?? []) : []
            const runAttributes = { 'toolport.sandbox.executor': options.sandbox.executor }
            const run = await inSpan(span, 'sandbox run', runAttributes, (child) =>
              options.egress.around(request.tenant, layers, async (channel) => {
                const ran = await options.sandbox.run({
                  command: request.command,
                  ...(request.argv ? { argv: request.argv } : {}),
                  ...(request.stdin !== undefined ? { stdin: request.stdin } : {}),
                  ...(request.mounts ? { mounts: request.mounts } : {}),
                  workspaceDir: checkout.dir,
                  ...(checkout.overlay ? { overlay: checkout.overlay } : {}),
                  cwd: request.cwd,
                  ...(request.image ? { image: request.image } : {}),
                  timeoutMs: request.timeoutMs,
                  signal: request.signal,
                  ...(request.onOutput ? { onOutput: request.onOutput } : {}),
                  ...(channel ? { egressSocket: channel.socketPath, notes: channel.notes } : {}),
                })
                child.setAttributes({
                  'process.exit.code': ran.exitCode ?? undefined,
                  'toolport.sandbox.timed_out': ran.timedOut,
                })
                return ran
              }),
            )
            // Every sandboxed process is dead here, so neither the count nor the scan can race with the command.
            // The watchdog only samples: a command can pass a limit between two samples, so the commit counts
            // the whole tree once more in its own walk, and a workspace past a limit keeps none of the run's changes.
            const sync = run.value.limitExceeded?.startsWith('workspace')
              ? { changes: [], skipped: [], passed: run.value.limitExceeded }
              : await inSpan(span, 'workspace commit', {}, async (child) => {
                  const committed = await checkout.commit(options.workspaceLimits)
                  child.setAttributes({ 'toolport.files.changed': committed.changes.length })
                  return committed
                })
            const passed = sync.passed
            if (passed) {
              await checkout.discard()
              return {
                ...run.value,
                limitExceeded: passed,
                filesChanged: [],
                skipped: [],
                downloaded: checkout.downloaded,
                discarded: true,
                ...(run.report ? { egress: run.report } : {}),
              }
            }
            return {
              ...run.value,
              filesChanged: sync.changes,
              skipped: sync.skipped,
              downloaded: checkout.downloaded,
              ...(run.report ? { egress: run.report } : {}),
            }
          } finally {
            await checkout.release()
          }
        })
      } finally {
        release()
      }
    },
  }
}

/**
 * Files for one call of a long-lived program, in a folder of their own in its scratch folder (two calls
 * in flight never see each other's), named by position so a name cannot climb out of it.
 */
async function stageFiles(
  scratch: string,
  files: ReadonlyArray<{ name: string; bytes: Uint8Array }>,
): Promise<StagedFiles> {
  const folder = `call-${crypto.randomUUID()}`
  const host = join(scratch, folder)
  await mkdir(host, { mode: 0o755 })
  const paths: string[] = []
  for (const [index, file] of files.entries()) {
    const name = `${index}-${basename(file.name).replace(/[^A-Za-z0-9._-]/g, '_')}`
    await writeFile(join(host, name), file.bytes, { mode: 0o644 })
    paths.push(`/workspace/${folder}/${name}`)
  }
  return { paths, remove: () => rm(host, { recursive: true, force: true }) }
}
