/**
 * The Sandbox interface: one fresh, isolated run of a shell command over a workspace folder.
 * Executors (bwrap, process, container) implement it; the shell service adds queueing and workspace sync.
 * Types only, so portable code (the tool) can depend on it.
 */
import type { OverlayLayers } from './overlay'

export type { OverlayLayers }
export type OutputStream = 'stdout' | 'stderr'

export interface SandboxRunRequest {
  /** A shell command line, run with /bin/sh -c (unless argv is given). */
  command: string
  /**
   * A program and its arguments, run as they are: no shell reads them, so no element is ever split,
   * expanded or interpreted (command sources bind tool input into whole elements).
   */
  argv?: readonly string[]
  /** Text written to the program's standard input, which is then closed; unset: no standard input. */
  stdin?: string
  /** Host folders the program sees read-only at the given sandbox paths (operator-configured sources). */
  mounts?: ReadonlyArray<{ host: string; sandbox: string }>
  /** Host folder mounted (or used) as the workspace. */
  workspaceDir: string
  /**
   * Run over these layers instead (executors with `overlays` only): workspaceDir is their lower layer,
   * which the run never writes; what it writes lands in the upper one.
   */
  overlay?: OverlayLayers
  /** Working directory relative to the workspace root ('' for the root). */
  cwd: string
  /** Extra variables on top of the executor's fixed minimal set. */
  env?: Record<string, string>
  /** Container image to run in (container executor only; one of its `images`). */
  image?: string
  timeoutMs: number
  signal: AbortSignal
  onOutput?: (stream: OutputStream, text: string) => void
  /**
   * Host path of this run's egress proxy socket: the executor binds it into the sandbox and runs the
   * command behind the forwarder (sandbox/egress). Unset: the run has no network at all.
   */
  egressSocket?: string
  /** Lines for the command's stderr that do not come from the command (egress refusals). */
  notes?: NoteChannel
}

/** A source of stderr lines the run did not write itself; attach() is called once the process exists. */
export interface NoteChannel {
  attach(write: (text: string) => void): void
}

export interface CapturedText {
  text: string
  /** Bytes produced in total, kept or not. */
  bytes: number
  truncated: boolean
}

export interface SandboxRunResult {
  /** null when the command was killed (timeout, disconnect, limit). */
  exitCode: number | null
  stdout: CapturedText
  stderr: CapturedText
  /** stdout and stderr interleaved in arrival order. */
  output: CapturedText
  timedOut: boolean
  /** True when the caller went away and the run was killed. */
  aborted: boolean
  /** Which limit stopped the command, when one did (memory, processes, workspace size). */
  limitExceeded: string | undefined
  durationMs: number
  /** CPU seconds and peak memory of the run, where the executor's control groups count them. */
  usage?: { cpuSeconds?: number; peakMemoryBytes?: number }
}

export interface SandboxStatus {
  executor: 'bwrap' | 'process' | 'container' | 'none'
  status: 'ok' | 'error' | 'absent'
  detail?: string
  /** What is enforced per run, in words: e.g. memory: "cgroup v1, 512 MiB". */
  enforced: Record<string, string>
}

export interface Sandbox {
  readonly executor: 'bwrap' | 'process' | 'container'
  /** Images a run may name (container executor); absent where commands run on the host's programs. */
  readonly images?: readonly string[]
  /** Can a run reach the network through the egress proxy (egressSocket)? Where false, none is opened. */
  readonly egress: boolean
  /** Present where runs can take an overlay (bwrap, when the probe could mount one here). */
  readonly overlays?: OverlaySupport
  status(): SandboxStatus
  run(request: SandboxRunRequest): Promise<SandboxRunResult>
  /**
   * Starts a long-lived program with pipes to its standard streams (a stdio MCP server), under the
   * same isolation and limits as a run, but no timeout: it lives until killed. Absent where an
   * executor cannot keep one (process on Lambda).
   */
  start?(request: SandboxStartRequest): Promise<SandboxProcess>
  /** Stops what the executor keeps ready between runs (bwrap: the next run's start and its cgroups). */
  close?(): Promise<void>
}

export interface OverlaySupport {
  /** The merged view of these workspace folders, once a run over the layers has ended (overlay.ts). */
  list(layers: OverlayLayers, folders: readonly string[]): Promise<Map<string, Buffer[]>>
}

export interface SandboxStartRequest {
  argv: readonly string[]
  /** Host folder mounted as /workspace (a scratch folder of the process's own). */
  workspaceDir: string
  cwd: string
  env?: Record<string, string>
  image?: string
  mounts?: ReadonlyArray<{ host: string; sandbox: string }>
  /** The egress proxy's socket to bind in (the program's only network); unset: none. */
  egressSocket?: string
}

/** Files staged for one call of a long-lived program. */
export interface StagedFiles {
  /** Each file's path inside the sandbox, in the order given. */
  paths: string[]
  remove(): Promise<void>
}

/** A sandboxed program that keeps running: write to its stdin, read its stdout and stderr. */
export interface SandboxProcess {
  write(text: string): void
  onStdout(listener: (chunk: Uint8Array) => void): void
  onStderr(listener: (text: string) => void): void
  readonly exited: Promise<{ code: number | null }>
  /** Kills its whole process group. */
  kill(): void
  /**
   * Puts files where the program can read them for one of its calls (a folder of their own in its
   * /workspace, its scratch folder): their paths inside the sandbox, and how to remove them after.
   * Unset where the starter keeps no folder for it.
   */
  stage?(files: ReadonlyArray<{ name: string; bytes: Uint8Array }>): Promise<StagedFiles>
}

/** The resource limits every executor applies to one command. */
export interface SandboxLimits {
  memoryBytes: number
  pids: number
  /** RLIMIT_FSIZE: largest file a command may write. */
  fileBytes: number
  openFiles: number
  maxOutputBytes: number
  /** Total size of the workspace folder during a run. */
  workspaceBytes: number
  workspaceEntries: number
}
