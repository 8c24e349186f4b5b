import { type ChildProcess, spawn } from 'node:child_process'

export interface Child {
  process: ChildProcess
  /** The child's ready line: the first JSON object it printed with `ready: true`. */
  ready: Record<string, unknown>
  stop(): Promise<void>
}

/**
 * Starts `node args…` and waits for its first stdout line that parses as a JSON object with
 * `ready: true` (other JSON lines, such as the service's own log, may come before it).
 */
export async function startChild(
  args: string[],
  env: Record<string, string | undefined> = {},
  timeoutMs = 60_000,
): Promise<Child> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } })
  let output = ''
  const ready = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`child did not start: ${output}`)), timeoutMs)
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      for (const line of output.split('\n')) {
        if (!line.startsWith('{')) continue
        try {
          const parsed = JSON.parse(line)
          if (parsed?.ready !== true) continue
          clearTimeout(timer)
          resolve(parsed)
          return
        } catch {}
      }
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString()
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`child exited with ${code}: ${output}`))
    })
  })
  child.stdout?.removeAllListeners('data')
  child.stdout?.resume()
  child.stderr?.resume()
  return {
    process: child,
    ready,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
      await exited
      clearTimeout(timer)
    },
  }
}

/** Starts `node args…` without waiting for output; the caller checks readiness itself. */
export function spawnNode(
  args: string[],
  env: Record<string, string | undefined> = {},
): Pick<Child, 'process' | 'stop'> {
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, ...env },
  })
  return {
    process: child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(timer)
    },
  }
}
