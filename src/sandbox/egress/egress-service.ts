import { randomUUID } from 'node:crypto'
import { chmod, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { EgressPolicy } from '../../core/egress-policy'
import { onFirstUse } from '../../core/first-use'
import type { Resolver } from '../../net/node-http'
import type { NoteChannel } from '../executors/sandbox'
import type { EgressReport } from './ledger'
import { openEgressSession } from './sandbox-proxy'
import type { EgressLimits } from './settings'
import type { EgressLayer } from './target'

/**
 * The egress side of the shell service: for a call whose policy opens any network, a proxy session
 * with its own socket for the length of the run; counts per tenant for the metrics.
 */
export interface EgressOptions {
  /** The operator's policy (TOOLPORT_SHELL_EGRESS). */
  policy: EgressPolicy
  limits: EgressLimits
  /** TOOLPORT_FETCH_ALLOW_HOSTS: the only exception to the address rules. */
  trustedHosts: readonly string[]
  /** Folder for the per-run sockets (under the work folder, outside every workspace copy). */
  socketsDir: string
  /** Owner of each socket: the host uid the sandbox runs as, when that is not the service's. */
  owner: { uid: number; gid: number } | undefined
  /** DNS resolution; tests inject names that resolve to loopback or private addresses. */
  resolve?: Resolver
}

/** What a run gets when it has network: the socket to bind into the sandbox, and lines for its stderr. */
export interface EgressChannel {
  socketPath: string
  notes: NoteChannel
}

export interface EgressTotals {
  tenant: string
  allowed: number
  refused: number
  bytesIn: number
  bytesOut: number
}

export interface EgressRun<T> {
  value: T
  /** Set when the run had network: what it contacted, under which policy. */
  report?: EgressReport & { policy: EgressPolicy }
}

export interface EgressService {
  readonly policy: EgressPolicy
  readonly limits: EgressLimits
  /** Counted since start, per tenant. */
  totals(): EgressTotals[]
  around<T>(
    tenant: string,
    layers: readonly EgressLayer[],
    run: (channel?: EgressChannel) => Promise<T>,
  ): Promise<EgressRun<T>>
}

export function createEgressService(options: EgressOptions): EgressService {
  const totals = new Map<string, EgressTotals>()
  const count = (tenant: string, report: EgressReport) => {
    const entry = totals.get(tenant) ?? { tenant, allowed: 0, refused: 0, bytesIn: 0, bytesOut: 0 }
    entry.allowed += report.allowed
    entry.refused += report.refused
    entry.bytesIn += report.bytesIn
    entry.bytesOut += report.bytesOut
    totals.set(tenant, entry)
  }
  // Made once: the sandbox user must reach each socket through this folder, and nobody can list it,
  // so a socket's random name is known only to the run it is bound into.
  const socketsFolder = onFirstUse(async () => {
    await mkdir(options.socketsDir, { recursive: true, mode: 0o711 })
    await chmod(options.socketsDir, 0o711)
  })
  return {
    policy: options.policy,
    limits: options.limits,
    totals: () => [...totals.values()].map((entry) => ({ ...entry })),
    async around<T>(
      tenant: string,
      layers: readonly EgressLayer[],
      run: (channel?: EgressChannel) => Promise<T>,
    ): Promise<EgressRun<T>> {
      // Each layer was checked to be within the one before it, so the last is the narrowest. A run
      // that names no layer gets the server's policy as its one layer: a proxy never opens with none,
      // which would decide nothing and let every host through.
      const ruled: readonly EgressLayer[] = layers.length > 0 ? layers : [{ source: 'server', policy: options.policy }]
      const policy = (ruled.at(-1) as EgressLayer).policy
      if (policy.mode === 'none') return { value: await run() }
      await socketsFolder()
      const notes = noteChannel()
      // The session removes its socket when it closes.
      const session = await openEgressSession({
        socketPath: join(options.socketsDir, `${randomUUID()}.sock`),
        owner: options.owner,
        rules: {
          layers: ruled,
          trustedHosts: options.trustedHosts,
          ...(options.resolve ? { resolve: options.resolve } : {}),
        },
        limits: options.limits,
        note: notes.note,
      })
      let value: T
      try {
        value = await run({ socketPath: session.socketPath, notes })
      } catch (error) {
        count(tenant, await session.close())
        throw error
      }
      const report = await session.close()
      count(tenant, report)
      return { value, report: { ...report, policy } }
    },
  }
}

/** Lines the proxy writes before the command's process exists wait here until the executor attaches. */
function noteChannel(): NoteChannel & { note(line: string): void } {
  let write: ((text: string) => void) | undefined
  const pending: string[] = []
  return {
    attach(writer) {
      write = writer
      for (const line of pending.splice(0)) writer(line)
    },
    note(line) {
      if (write) write(line)
      else pending.push(line)
    },
  }
}
