import type { ChildProcess } from 'node:child_process'
import { chown, mkdtemp, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { runChild } from './child'
import { workspaceWatchdog } from './disk-usage'
import type { Sandbox, SandboxLimits, SandboxRunRequest, SandboxRunResult } from './sandbox'

/** The program an executor starts for a request (its sandbox chain), and where. */
export interface SandboxedProgram {
  file: string
  args: string[]
  env: Record<string, string>
  cwd?: string
  /** Data for descriptors 3, 4, … of the program (see runChild). */
  inputs?: readonly Uint8Array[]
}

/** A program spawned ahead (warm-start.ts), and the data its descriptors 3, 4, … get once its run comes. */
export interface SpawnedProgram {
  spawned: ChildProcess
  inputs: readonly Uint8Array[]
}

/**
 * runChild as every executor uses it: the request's timeout, signal and output callback, the output
 * cap, and the workspace size/entries watchdog on the host folder.
 */
export function runSandboxedChild(
  program: SandboxedProgram | SpawnedProgram,
  request: SandboxRunRequest,
  limits: SandboxLimits,
) {
  return runChild({
    ...program,
    timeoutMs: request.timeoutMs,
    signal: request.signal,
    maxOutputBytes: limits.maxOutputBytes,
    ...(request.stdin !== undefined ? { stdin: request.stdin } : {}),
    ...(request.onOutput ? { onOutput: request.onOutput } : {}),
    ...(request.notes ? { notes: request.notes } : {}),
    watchdog: {
      intervalMs: 250,
      // Over an overlay, what the host holds: the copy and what the run wrote on top of it.
      check: workspaceWatchdog(
        request.overlay?.upper ?? request.workspaceDir,
        limits.workspaceBytes,
        limits.workspaceEntries,
        request.overlay?.lowerUsage,
      ),
    },
  })
}

/** The workspace limit that stopped a run, when one did (the watchdog's reasons start with 'workspace'). */
export function workspaceLimitOf(killedFor: string | undefined): SandboxRunResult['limitExceeded'] {
  return killedFor?.startsWith('workspace') ? killedFor : undefined
}

/**
 * Runs `true` once in a fresh folder inside the real work folder (which also proves the sandbox
 * user can reach it); the text says why the executor cannot work here.
 */
export async function probeSandbox(
  sandbox: Sandbox,
  workDir: string,
  owner: { uid: number; gid: number } | undefined,
  timeoutMs: number,
): Promise<string | undefined> {
  const workspace = await mkdtemp(join(workDir, 'probe-'))
  try {
    if (owner) await chown(workspace, owner.uid, owner.gid)
    const result = await sandbox.run({
      command: 'true',
      workspaceDir: workspace,
      cwd: '',
      timeoutMs,
      signal: new AbortController().signal,
    })
    return result.exitCode === 0 ? undefined : result.output.text.trim() || `exit code ${result.exitCode}`
  } catch (error) {
    return (error as Error).message
  } finally {
    await rm(workspace, { recursive: true, force: true })
  }
}
