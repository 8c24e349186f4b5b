import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './ports'

/**
 * `wrangler dev --local` for tests: the committed infra/cloudflare/wrangler.toml with main and the
 * assets folder pointed at a fresh build, on random loopback ports, in its own process group (wrangler
 * starts workerd as a grandchild; stopping only wrangler would leave it serving).
 */
export interface WranglerDev {
  url: string
  stop(): Promise<void>
}

/** Thrown when wrangler itself cannot run on this machine (as opposed to our Worker failing). */
export class WranglerUnavailable extends Error {}

function stopGroup(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.pid === undefined) return resolve()
    const timer = setTimeout(() => {
      try {
        process.kill(-(child.pid as number), 'SIGKILL')
      } catch {}
    }, 5_000)
    child.once('exit', () => {
      clearTimeout(timer)
      resolve()
    })
    try {
      process.kill(-(child.pid as number), 'SIGTERM')
    } catch {
      resolve()
    }
  })
}

export async function startWranglerDev(options: {
  workerDir: string
  vars: Record<string, string>
  timeoutMs?: number
}): Promise<WranglerDev> {
  const folder = await mkdtemp(join(tmpdir(), 'toolport-wrangler-'))
  const committed = await readFile(new URL('../../infra/cloudflare/wrangler.toml', import.meta.url), 'utf8')
  const config = committed
    .replace(/^main = .*$/m, `main = ${JSON.stringify(join(options.workerDir, 'index.js'))}`)
    .replace(/^directory = .*$/m, `directory = ${JSON.stringify(join(options.workerDir, 'assets'))}`)
  await writeFile(join(folder, 'wrangler.toml'), config)
  const [port, inspectorPort] = [await freePort(), await freePort()]
  const wrangler = createRequire(import.meta.url).resolve('wrangler/bin/wrangler.js')
  const args = [wrangler, 'dev', '--config', join(folder, 'wrangler.toml'), '--local', '--ip', '127.0.0.1']
  args.push('--port', String(port), '--inspector-port', String(inspectorPort), '--persist-to', join(folder, 'state'))
  args.push('--show-interactive-dev-session=false', '--log-level', 'warn')
  for (const [name, value] of Object.entries(options.vars)) args.push('--var', `${name}:${value}`)
  const child = spawn(process.execPath, args, {
    cwd: folder,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false', CI: 'true' },
  })
  let output = ''
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk))
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk))
  const url = `http://127.0.0.1:${port}`
  const stop = async () => {
    await stopGroup(child)
    await rm(folder, { recursive: true, force: true })
  }
  const deadline = Date.now() + (options.timeoutMs ?? 90_000)
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      await stop()
      const message = `wrangler dev exited with ${child.exitCode}: ${output.slice(-2000)}`
      // The runtime binary or Node version failing is this machine's limit; a config error is ours.
      const machine = /workerd|GLIBC|Node\.js v?\d|spawn|EACCES|ENOENT/i.test(output) && !/wrangler\.toml/i.test(output)
      throw machine ? new WranglerUnavailable(message) : new Error(message)
    }
    const ready = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) }).then(
      (response) => response.ok,
      () => false,
    )
    if (ready) return { url, stop }
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
  await stop()
  throw new Error(`wrangler dev did not serve /healthz within the timeout: ${output.slice(-2000)}`)
}
