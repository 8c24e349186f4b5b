import { type ChildProcess, spawn } from 'node:child_process'
import type { Writable } from 'node:stream'
import { createOutputCapture } from './capture'
import type { NoteChannel, OutputStream, SandboxRunResult } from './sandbox'

/** The program to spawn, or one spawned ahead (its own process group, pipes on every descriptor used). */
export type ChildProgram =
  | { file: string; args: string[]; env: Record<string, string>; cwd?: string; spawned?: undefined }
  | { spawned: ChildProcess }

export type ChildRun = ChildProgram & ChildRunOptions

export interface ChildRunOptions {
  timeoutMs: number
  signal: AbortSignal
  maxOutputBytes: number
  /** Written to standard input, which is then closed; unset: no standard input. */
  stdin?: string
  onOutput?: (stream: OutputStream, text: string) => void
  /** Extra stderr lines from outside the process (egress refusals), kept and streamed like its own. */
  notes?: NoteChannel
  /** Polled while the command runs; a returned reason kills the run (e.g. the workspace grew too big). */
  watchdog?: { intervalMs: number; check: () => Promise<string | undefined> }
  /**
   * Data the program reads from descriptors 3, 4, … (pipes, each closed after its data): how bwrap gets
   * its arguments and generated files without a host path on its command line (`--args 3`).
   */
  inputs?: readonly Uint8Array[]
}

/** A process spawned ahead that was no longer running when its run came: start another. */
export class StaleStartError extends Error {}

// After the main process is gone, how long to wait for pipes held open by stray descendants.
const pipeGraceMs = 250

/**
 * Spawns one process in its own process group and collects its output with caps. Timeout, abort
 * and watchdog all end in SIGKILL to the whole group: a command that ignores SIGTERM or forks
 * children must not outlive its call.
 */
export function runChild(run: ChildRun): Promise<Omit<SandboxRunResult, 'limitExceeded'> & { killedFor?: string }> {
  const started = performance.now()
  const stdout = createOutputCapture(run.maxOutputBytes)
  const stderr = createOutputCapture(run.maxOutputBytes)
  const output = createOutputCapture(run.maxOutputBytes * 2)
  return new Promise((resolve, reject) => {
    // Spawned ahead and gone since (its events passed before anyone listened): a start that failed.
    if (run.spawned && (run.spawned.exitCode !== null || run.spawned.signalCode !== null)) {
      reject(
        new StaleStartError(
          `the sandbox's start exited before its run (${run.spawned.exitCode ?? run.spawned.signalCode})`,
        ),
      )
      return
    }
    const child =
      run.spawned ??
      spawn(run.file, run.args, {
        env: run.env,
        ...(run.cwd ? { cwd: run.cwd } : {}),
        stdio: [
          run.stdin === undefined ? 'ignore' : 'pipe',
          'pipe',
          'pipe',
          ...(run.inputs ?? []).map(() => 'pipe' as const),
        ],
        detached: true,
      })
    // A child spawned ahead has a pipe for standard input either way: without stdin, it reads an end.
    if (child.stdin) {
      // A program that exits without reading all of it closes the pipe: that is not an error of the run.
      child.stdin.on('error', () => {})
      child.stdin.end(run.stdin)
    }
    ;(run.inputs ?? []).forEach((data, index) => {
      const pipe = child.stdio[3 + index] as Writable | null
      // A program that exits before reading (a failed start) closes the pipe: nothing to report.
      pipe?.on('error', () => {})
      pipe?.end(data)
    })
    let killedFor: string | undefined
    let timedOut = false
    let aborted = false
    const sweep = () => {
      if (child.pid === undefined) return
      try {
        process.kill(-child.pid, 'SIGKILL')
      } catch {
        // The group is already gone.
      }
    }
    const killGroup = (reason: string) => {
      killedFor ??= reason
      sweep()
    }
    const timer = setTimeout(() => {
      timedOut = true
      killGroup('timeout')
    }, run.timeoutMs)
    const onAbort = () => {
      aborted = true
      killGroup('aborted')
    }
    if (run.signal.aborted) onAbort()
    else run.signal.addEventListener('abort', onAbort, { once: true })
    let watching = false
    const watchdog =
      run.watchdog &&
      setInterval(async () => {
        if (watching || !run.watchdog) return
        watching = true
        const reason = await run.watchdog.check().catch(() => undefined)
        watching = false
        if (reason) killGroup(reason)
      }, run.watchdog.intervalMs)

    const collect = (stream: OutputStream) => (chunk: Buffer) => {
      const bytes = new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)
      ;(stream === 'stdout' ? stdout : stderr).push(bytes)
      output.push(bytes)
      run.onOutput?.(stream, chunk.toString('utf8'))
    }
    child.stdout?.on('data', collect('stdout'))
    child.stderr?.on('data', collect('stderr'))

    let exitCode: number | null = null
    let settled = false
    const note = collect('stderr')
    run.notes?.attach((text) => {
      if (!settled) note(Buffer.from(text))
    })
    const finish = () => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      if (watchdog) clearInterval(watchdog)
      run.signal.removeEventListener('abort', onAbort)
      child.stdout?.destroy()
      child.stderr?.destroy()
      resolve({
        exitCode: killedFor ? null : exitCode,
        stdout: stdout.finish(),
        stderr: stderr.finish(),
        output: output.finish(),
        timedOut,
        aborted,
        durationMs: Math.round(performance.now() - started),
        ...(killedFor ? { killedFor } : {}),
      })
    }
    child.once('error', (error) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      if (watchdog) clearInterval(watchdog)
      reject(error)
    })
    child.once('exit', (code, signal) => {
      exitCode = code ?? (signal ? 128 + signalNumber(signal) : null)
      // Background children of the command die with it.
      sweep()
      setTimeout(finish, pipeGraceMs).unref()
    })
    child.once('close', finish)
  })
}

const signalNumbers: Record<string, number> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGABRT: 6,
  SIGKILL: 9,
  SIGSEGV: 11,
  SIGPIPE: 13,
  SIGALRM: 14,
  SIGTERM: 15,
  SIGXCPU: 24,
  SIGXFSZ: 25,
}

function signalNumber(signal: string): number {
  return signalNumbers[signal] ?? 0
}
