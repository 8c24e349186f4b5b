import { lookup } from 'node:dns/promises'
import { canonicalHost, type EgressPolicy, isIpAddress, patternMatches } from '../../core/egress-policy'
import type { Resolver } from '../../net/node-http'
import { addressProblem, hostNameProblem, isAllowedHost } from '../../net/outbound-guard'

/**
 * Decides one connection the sandbox asks for: the policy's host lists first (by the name the command
 * gave, so a refused name is never even resolved), then the address rules of every outbound request
 * (net/outbound-guard.ts) on each address the name resolves to. The proxy connects to the address checked here,
 * so a name that resolves differently a moment later (DNS rebinding) cannot pass. Host:ports of
 * TOOLPORT_FETCH_ALLOW_HOSTS are the one exception to the address rules, as for http_fetch.
 */
export interface EgressLayer {
  /** Who set this policy: the operator, the caller's key, or the call itself. */
  source: 'server' | 'key' | 'call'
  policy: EgressPolicy
}

export interface TargetRules {
  /** Outermost first; a target must pass every one. */
  layers: readonly EgressLayer[]
  /** TOOLPORT_FETCH_ALLOW_HOSTS. */
  trustedHosts: readonly string[]
  resolve?: Resolver
}

export type TargetVerdict =
  | { allowed: true; host: string; address: string; family: 4 | 6 }
  | { allowed: false; host: string; reason: string }

const whoseList: Record<EgressLayer['source'], string> = {
  server: "the server's allow-list",
  key: "this key's allow-list",
  call: "this call's egress allow-list",
}

const systemResolver: Resolver = (host) => lookup(host, { all: true, verbatim: true })

export function displayHost(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`
}

export async function checkTarget(rawHost: string, port: number, rules: TargetRules): Promise<TargetVerdict> {
  const host = canonicalHost(rawHost)
  const shown = displayHost(host ?? rawHost.slice(0, 100), port)
  if (!host) return { allowed: false, host: shown, reason: 'not a valid host name or address' }
  if (!Number.isInteger(port) || port < 1 || port > 65_535) {
    return { allowed: false, host: shown, reason: 'not a valid port' }
  }
  for (const layer of rules.layers) {
    if (layer.policy.mode === 'none')
      return { allowed: false, host: shown, reason: `${whoseList[layer.source]} is empty` }
    if (layer.policy.mode === 'allow' && !layer.policy.allow.some((pattern) => patternMatches(pattern, host, port))) {
      return { allowed: false, host: shown, reason: `not in ${whoseList[layer.source]}` }
    }
  }
  const url = new URL(`http://${shown}/`)
  const trusted = isAllowedHost(url, { allowHosts: rules.trustedHosts })
  if (!trusted) {
    const nameProblem = hostNameProblem(url)
    if (nameProblem) return { allowed: false, host: shown, reason: nameProblem }
  }
  if (isIpAddress(host)) {
    const problem = trusted ? undefined : addressProblem(host)
    if (problem) return { allowed: false, host: shown, reason: problem }
    return { allowed: true, host: shown, address: host, family: host.includes(':') ? 6 : 4 }
  }
  let answers: Array<{ address: string; family: number }>
  try {
    answers = await (rules.resolve ?? systemResolver)(host)
  } catch {
    answers = []
  }
  const first = answers[0]
  if (!first) return { allowed: false, host: shown, reason: 'the name does not resolve' }
  // Every answer must pass: a name that also points inward is refused, not raced.
  for (const answer of trusted ? [] : answers) {
    const problem = addressProblem(answer.address)
    if (problem) return { allowed: false, host: shown, reason: `its address ${problem}` }
  }
  return { allowed: true, host: shown, address: first.address, family: first.family === 6 ? 6 : 4 }
}
