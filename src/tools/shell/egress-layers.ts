import { z } from 'zod'
import { type EgressPolicy, type EgressText, egressBeyond, formatEgress, parseEgress } from '../../core/egress-policy'
import { ToolError } from '../../core/errors'
import type { EgressLayer } from '../../sandbox/egress/target'
import type { ShellService } from '../../sandbox/shell-service'

/**
 * execute_command's network: the operator's policy, narrowed by the key (keys file) and by the call's
 * own `egress`. A call may ask for less, never more: asking beyond what its key may reach is refused
 * before anything runs, naming what it may ask for.
 */
const HostRecord = z.object({
  host: z.string().describe('host:port as the command asked for it.'),
  allowed: z.number().int().describe('Connections the policy let through.'),
  refused: z.number().int(),
  failed: z.number().int().describe('Let through, but the host could not be reached.'),
  bytes_in: z.number().int(),
  bytes_out: z.number().int(),
  reason: z.string().optional().describe('Why connections were refused or failed.'),
})

const EgressWritten = z.union([z.enum(['none', 'public']), z.object({ allow: z.array(z.string()) })])

export const EgressResult = z
  .object({
    policy: EgressWritten.describe('The policy this call ran under.'),
    connections: z.object({ allowed: z.number().int(), refused: z.number().int(), failed: z.number().int() }),
    bytes_in: z.number().int(),
    bytes_out: z.number().int(),
    hosts: z.array(HostRecord).describe('Every host the command tried to reach (the first 50).'),
    hosts_count: z.number().int(),
    limits_reached: z
      .array(z.enum(['connections', 'bytes_in', 'bytes_out', 'connection_time']))
      .optional()
      .describe("The call's egress limits that refused or cut connections."),
  })
  .describe('What the command reached through the egress proxy; absent when it had no network.')

const maxListedHosts = 50

/** The layers a call runs under, outermost first; throws when the call asks beyond its key. */
export function egressLayers(
  shell: ShellService,
  keyEgress: EgressPolicy | undefined,
  callEgress: EgressText | undefined,
): EgressLayer[] {
  const layers: EgressLayer[] = [{ source: 'server', policy: shell.egress.policy }]
  if (keyEgress) layers.push({ source: 'key', policy: keyEgress })
  if (callEgress === undefined) return layers
  const parsed = parseEgress(callEgress)
  if ('problems' in parsed) {
    throw new ToolError('validation', `egress: ${parsed.problems.join('; ')}.`, {
      hint: 'Write egress as "none", "public" or { "allow": ["host", "*.host:443", "@npm"] }.',
      details: { field: 'egress' },
    })
  }
  const mayReach = (layers.at(-1) as EgressLayer).policy
  const beyond = egressBeyond(mayReach, parsed.policy)
  if (beyond) {
    throw new ToolError('permission_denied', `egress asks for ${beyond}, which this key may not reach.`, {
      hint: `Ask for no more than ${JSON.stringify(formatEgress(mayReach))}, or omit egress to get exactly that.`,
      details: { field: 'egress', allowed: formatEgress(mayReach) },
      refusal: { kind: 'policy', target: beyond },
    })
  }
  layers.push({ source: 'call', policy: parsed.policy })
  return layers
}

/** What a call may reach, as the dry run and /v1/context state it. */
export function describeEgress(shell: ShellService, layers: readonly EgressLayer[]) {
  if (shell.network === 'host') {
    return { policy: 'unrestricted' as const, note: 'The process executor runs commands with the host network.' }
  }
  const effective = (layers.at(-1) as EgressLayer).policy
  return {
    policy: formatEgress(effective),
    ...(effective.mode === 'none'
      ? {}
      : {
          proxy: 'HTTP_PROXY, HTTPS_PROXY and ALL_PROXY point at the egress proxy; direct connections fail.',
          limits: {
            connections: shell.egress.limits.connections,
            bytes_in: shell.egress.limits.bytesIn,
            bytes_out: shell.egress.limits.bytesOut,
            connection_seconds: shell.egress.limits.connectionSeconds,
          },
        }),
  }
}

/** The result's egress field, and a hint when something was refused or cut. */
export function egressOutcome(report: NonNullable<Awaited<ReturnType<ShellService['execute']>>['egress']>) {
  const result: z.input<typeof EgressResult> = {
    policy: formatEgress(report.policy),
    connections: { allowed: report.allowed, refused: report.refused, failed: report.failed },
    bytes_in: report.bytesIn,
    bytes_out: report.bytesOut,
    hosts: report.hosts.slice(0, maxListedHosts),
    hosts_count: report.hosts.length,
    ...(report.limitsReached.length > 0 ? { limits_reached: report.limitsReached } : {}),
  }
  const hints = [
    report.refused > 0
      ? "Some connections were refused (egress.hosts says why): only the hosts of this call's egress policy are reachable, through HTTP_PROXY/HTTPS_PROXY."
      : '',
    report.limitsReached.length > 0 ? `Egress limits reached: ${report.limitsReached.join(', ')}.` : '',
  ].filter(Boolean)
  return { result, hint: hints.join(' ') }
}
