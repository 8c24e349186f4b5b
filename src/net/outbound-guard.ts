import ipaddr from 'ipaddr.js'
import { ToolError } from '../core/errors'

/**
 * Which outbound targets are allowed. Only globally routable unicast addresses are: loopback,
 * private, link-local (cloud metadata lives there), CGNAT, multicast, unspecified, reserved,
 * IPv4-mapped/compatible IPv6, NAT64, 6to4 and Teredo are refused — by address, after resolution,
 * so no spelling of a host can get around it. Operators open exceptions with TOOLPORT_FETCH_ALLOW_HOSTS.
 */
export interface NetworkPolicy {
  /** Entries `host` (any port) or `host:port`, `[v6]:port`; compared case-insensitively. */
  allowHosts: readonly string[]
}

// Ranges ipaddr.js calls unicast that are not the public internet.
const extraBlocked: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> = [
  ipaddr.parseCIDR('::/96'), // IPv4-compatible IPv6 (deprecated): ::7f00:1 is 127.0.0.1
  ipaddr.parseCIDR('64:ff9b:1::/48'), // local-use NAT64 (RFC 8215)
  ipaddr.parseCIDR('fec0::/10'), // deprecated site-local
  ipaddr.parseCIDR('100::/64'), // discard-only
]
const blockedNames = new Set(['metadata.google.internal', 'metadata', 'instance-data', 'instance-data.ec2.internal'])

const refusedHint =
  'Only public internet addresses can be fetched; private, loopback, link-local and cloud metadata addresses are refused. Ask the operator to add the host to TOOLPORT_FETCH_ALLOW_HOSTS if it must be reachable.'

export function refused(target: string, reason: string): ToolError {
  return new ToolError('permission_denied', `Refusing to connect to ${target}: ${reason}.`, {
    hint: refusedHint,
    details: { field: 'url' },
    refusal: { kind: 'connection', target },
  })
}

// ipaddr.js range ids, as a sentence names them (with their article).
const rangeNames: Record<string, string> = {
  loopback: 'a loopback',
  private: 'a private',
  linkLocal: 'a link-local (linkLocal)',
  carrierGradeNat: 'a carrier-grade NAT (carrierGradeNat)',
  ipv4Mapped: 'an IPv4-mapped (ipv4Mapped)',
  rfc6052: 'a NAT64 (rfc6052)',
  rfc6145: 'an IPv4-translated (rfc6145)',
  '6to4': 'a 6to4',
  teredo: 'a Teredo',
  uniqueLocal: 'a unique-local',
  unspecified: 'an unspecified',
  multicast: 'a multicast',
  broadcast: 'a broadcast',
  reserved: 'a reserved',
}

/** Why an address may not be contacted, or undefined when it is public. */
export function addressProblem(address: string): string | undefined {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6
  try {
    parsed = ipaddr.parse(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''))
  } catch {
    return 'not an IP address'
  }
  const range = parsed.range()
  if (range !== 'unicast') return `${address} is ${rangeNames[range] ?? `a ${range}`} address`
  for (const [network, bits] of extraBlocked) {
    if (parsed.kind() === network.kind() && parsed.match(network, bits))
      return `${address} is in a special-purpose range`
  }
  return undefined
}

export function bareHost(hostname: string): string {
  return hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase()
}

export function defaultPort(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80
}

/** True when the operator opened this host (and port) explicitly. */
export function isAllowedHost(url: URL, policy: NetworkPolicy): boolean {
  const host = bareHost(url.hostname)
  const port = defaultPort(url)
  return policy.allowHosts.some((entry) => {
    const match = /^\[?([^\]]*?)\]?(?::(\d+))?$/.exec(entry.trim().toLowerCase())
    if (!match) return false
    const [, allowedHost = '', allowedPort] = match
    return bareHost(allowedHost) === host && (allowedPort === undefined || Number(allowedPort) === port)
  })
}

/** Parses and checks a URL's shape: http(s) only, no credentials in it. */
export function parseTargetUrl(raw: string): URL {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new ToolError('validation', `Not a valid absolute URL: ${JSON.stringify(raw.slice(0, 200))}.`, {
      hint: 'Send an absolute http:// or https:// URL, such as "https://example.com/page".',
      details: { field: 'url' },
    })
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ToolError('validation', `Only http and https URLs can be fetched, not ${url.protocol}.`, {
      hint: 'Send an http:// or https:// URL.',
      details: { field: 'url' },
    })
  }
  if (url.username || url.password) {
    throw new ToolError('validation', 'URLs with a user name or password are not accepted.', {
      hint: 'Send credentials in the headers (e.g. Authorization) instead of the URL.',
      details: { field: 'url' },
    })
  }
  return url
}

/** Checks a host name before resolution: names that are metadata services are refused outright. */
export function hostNameProblem(url: URL): string | undefined {
  const host = bareHost(url.hostname)
  if (blockedNames.has(host)) return `${host} is a cloud metadata service`
  if (host === 'localhost' || host.endsWith('.localhost')) return `${host} is this machine`
  return undefined
}
