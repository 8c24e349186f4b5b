import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { testCertificates } from './certificates'
import { freePort } from './ports'

/** Debian's redis-server (CI installs it), started and stopped by the suite on 127.0.0.1. */
export const redisServerPath = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((path) => existsSync(path))

export interface RedisServer {
  /** redis://127.0.0.1:port, or rediss://:password@… with TLS and a password. */
  url: string
  port: number
  /** With TLS: the CA that signed the server's certificate (for NODE_EXTRA_CA_CERTS). */
  caFile?: string
  /** Stops the server (its data is gone: no persistence). */
  stop(): Promise<void>
  /** Starts it again on the same port. */
  start(): Promise<void>
}

export async function startRedis(options: { password?: string; tls?: boolean } = {}): Promise<RedisServer> {
  if (!redisServerPath) throw new Error('redis-server is not installed (Debian: apt-get install redis-server)')
  const port = await freePort()
  const certificates = options.tls ? testCertificates() : undefined
  const listen = certificates
    ? [
        '--port',
        '0',
        '--tls-port',
        String(port),
        '--tls-cert-file',
        certificates.cert,
        '--tls-key-file',
        certificates.key,
      ]
    : ['--port', String(port)]
  const extra = [
    ...(certificates ? ['--tls-ca-cert-file', certificates.ca, '--tls-auth-clients', 'no'] : []),
    ...(options.password ? ['--requirepass', options.password] : []),
  ]
  let child: ChildProcess | undefined
  const launch = () =>
    new Promise<void>((resolve, reject) => {
      const started = spawn(
        redisServerPath as string,
        [...listen, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'yes', ...extra],
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
  const auth = options.password ? `:${encodeURIComponent(options.password)}@` : ''
  return {
    url: `${certificates ? 'rediss' : 'redis'}://${auth}127.0.0.1:${port}`,
    port,
    ...(certificates ? { caFile: certificates.ca } : {}),
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
