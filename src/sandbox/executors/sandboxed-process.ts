import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import type { Writable } from 'node:stream'
import type { SandboxProcess } from './sandbox'
import type { SandboxedProgram, SpawnedProgram } from './sandboxed-child'

/**
 * Spawns a sandbox chain that keeps running (or takes one spawned ahead, warm-start.ts), in its own
 * process group, with pipes to its standard streams. kill() ends the whole group (bwrap dies with its parent, the program with bwrap); `cleanUp`
 * runs once it has exited (removing its cgroups).
 */
export function spawnSandboxedProcess(
  program: SandboxedProgram | SpawnedProgram,
  cleanUp: () => Promise<void> | undefined,
): SandboxProcess {
  const child = (
    'spawned' in program
      ? program.spawned
      : spawn(program.file, program.args, {
          env: program.env,
          ...(program.cwd ? { cwd: program.cwd } : {}),
          stdio: ['pipe', 'pipe', 'pipe', ...(program.inputs ?? []).map(() => 'pipe' as const)],
          detached: true,
        })
  ) as ChildProcessWithoutNullStreams
  // Data for descriptors 3, 4, … (bwrap's options and generated files; a start's program), each closed
  // after its data.
  ;(program.inputs ?? []).forEach((data, index) => {
    const pipe = child.stdio[3 + index] as Writable | null
    pipe?.on('error', () => {})
    pipe?.end(data)
  })
  const kill = () => {
    if (child.pid === undefined) return
    try {
      process.kill(-child.pid, 'SIGKILL')
    } catch {
      // The group is already gone.
    }
  }
  const exited = new Promise<{ code: number | null }>((resolve) => {
    let done = false
    const finish = (code: number | null) => {
      if (done) return
      done = true
      kill()
      void Promise.resolve(cleanUp())
        .catch(() => {})
        .then(() => resolve({ code }))
    }
    child.once('exit', (code) => finish(code))
    child.once('error', () => finish(null))
  })
  // A server that stops reading must not crash the service with EPIPE.
  child.stdin.on('error', () => {})
  return {
    write: (text) => {
      if (!child.stdin.destroyed) child.stdin.write(text)
    },
    onStdout: (listener) => {
      child.stdout.on('data', (chunk: Buffer) =>
        listener(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)),
      )
    },
    onStderr: (listener) => {
      child.stderr.on('data', (chunk: Buffer) => listener(chunk.toString('utf8')))
    },
    exited,
    kill,
  }
}
