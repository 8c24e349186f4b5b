import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { chmod, mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { watchListening } from './listening'
import { type S3rverInstance, s3rverCredentials, s3rverEnv } from './s3rver'

/**
 * Real toolport processes (src/runtimes/node.ts under tsx, as `npm run dev` runs it) on one s3rver bucket:
 * a fleet the fault suite can SIGKILL, SIGSTOP and run with a clock off.
 */
const root = new URL('../..', import.meta.url).pathname

/** Debian's libfaketime (package faketime): every clock of the process shifted, timers left alone. */
export const faketimeLibrary = '/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1'
export const hasFaketime = existsSync(faketimeLibrary)

export interface FleetInstance {
  name: string
  url: string
  child: ChildProcess
  output: () => string
  /** SIGKILL, and wait for the process to be gone. */
  kill(): Promise<void>
  stop(): void
  resume(): void
}

export interface InstanceOptions {
  name: string
  /** Shifts the instance's wall clock (libfaketime's FAKETIME offset, such as "+60s"). */
  clockOffset?: string
  env?: Record<string, string>
}

export async function startInstance(
  bucket: Pick<S3rverInstance, 'bucket' | 'endpoint'>,
  options: InstanceOptions,
): Promise<FleetInstance> {
  const dataDir = await mkdtemp(join(tmpdir(), `toolport-fleet-${options.name}-`))
  // The sandbox user must be able to reach the work folder inside it.
  await chmod(dataDir, 0o711)
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/root',
    PORT: '0',
    TOOLPORT_DATA_DIR: dataDir,
    // One work folder per process (src/sandbox/work-dir-claim.ts), as on separate machines.
    TOOLPORT_WORK_DIR: join(dataDir, 'work'),
    TOOLPORT_STORAGE: 's3',
    // One fleet, one secret: a download link any instance made works on every instance.
    TOOLPORT_SIGNING_SECRET: 'fleet-suite-signing-secret-0123456789',
    ...s3rverEnv(bucket),
    AWS_ACCESS_KEY_ID: s3rverCredentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3rverCredentials.secretAccessKey,
    ...(options.clockOffset
      ? { LD_PRELOAD: faketimeLibrary, FAKETIME: options.clockOffset, DONT_FAKE_MONOTONIC: '1' }
      : {}),
    ...options.env,
  }
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/runtimes/node.ts'], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  // Drained once listening: the access log of a long fault run is not kept in memory.
  const { url, output } = watchListening(child, { drain: true })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  return {
    name: options.name,
    url: await url,
    child,
    output,
    async kill() {
      child.kill('SIGKILL')
      await exited
    },
    stop: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
  }
}

export interface CallAnswer {
  status: number
  body: Record<string, unknown>
}

/** A tool call that answers, or null when the instance never did (killed: not acknowledged). */
export async function callTool(
  instance: Pick<FleetInstance, 'url'>,
  tool: string,
  input: unknown,
  workspace = 'fleet',
): Promise<CallAnswer | null> {
  try {
    const response = await fetch(`${instance.url}/v1/tools/${tool}?workspace=${encodeURIComponent(workspace)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(input),
    })
    return { status: response.status, body: (await response.json()) as Record<string, unknown> }
  } catch {
    return null
  }
}
