import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { freePort } from './ports'

/** Debian's redis-server (CI installs it), started and stopped by the suite on 127.0.0.1. */
export const redisServerPath = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((path) => existsSync(path))

export interface RedisServer {
  url: string
  port: number
  /** Stops the server (its data is gone: no persistence). */
  stop(): Promise<void>
  /** Starts it again on the same port. */
  start(): Promise<void>
}

export async function startRedis(): Promise<RedisServer> {
  if (!redisServerPath) throw new Error('redis-server is not installed (Debian: apt-get install redis-server)')
  const port = await freePort()
  let child: ChildProcess | undefined
  const launch = () =>
    new Promise<void>((resolve, reject) => {
      const started = spawn(
        redisServerPath as string,
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'yes'],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      )
      child = started
      let output = ''
      const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${output}`)), 10_000)
      started.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString()
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer)
          resolve()
        }
      })
      started.once('exit', (code) => {
        clearTimeout(timer)
        reject(new Error(`redis-server exited with ${code}: ${output}`))
      })
    })
  await launch()
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async stop() {
      const running = child
      if (!running || running.exitCode !== null) return
      const exited = new Promise((resolve) => running.once('exit', resolve))
      running.kill('SIGKILL')
      await exited
    },
    start: launch,
  }
}
