import { z } from 'zod'
import { presetNames, presetPatterns } from './egress-presets'

/**
 * Egress policies of the shell sandbox: which hosts a command may reach through toolport's proxy.
 * `none` (no network), `public` (any public address) or `allow` (a list of host patterns). The operator
 * sets one for the server; a key and a call may only narrow it. Written as `"none"`, `"public"` or
 * `{ "allow": ["registry.npmjs.org", "*.github.com:443", "@pypi"] }`. Portable: the keys file, the
 * settings, the tool and the proxy all read policies through this module.
 */
export interface HostPattern {
  /** Canonical lower-case host: a DNS name, an IPv4 address, or an IPv6 address without brackets. */
  host: string
  /** `*.host`: any name below host (not host itself). */
  wildcard: boolean
  /** undefined: any port. */
  port: number | undefined
}

export type EgressPolicy = { mode: 'none' } | { mode: 'public' } | { mode: 'allow'; allow: HostPattern[] }

/** The written form, as settings, keys files and calls spell it. */
export type EgressText = 'none' | 'public' | { allow: string[] }

/** One allow-list entry as written: `host`, `*.host`, `1.2.3.4`, `[v6]`, each with an optional `:port`; or `@preset`. */
export const egressEntry =
  /^(?:@[a-z][a-z0-9-]{0,31}|(?:\*\.)?[A-Za-z0-9_.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?$/

export const egressTextSchema = z.union([
  z.enum(['none', 'public']),
  z
    .object({
      allow: z
        .array(z.string().max(300).regex(egressEntry, 'must be host, *.host, host:port, [v6]:port or @preset'))
        .min(1)
        .max(256),
    })
    .strict(),
])

const dnsName = /^[a-z0-9_](?:[a-z0-9_-]{0,62})(?:\.[a-z0-9_](?:[a-z0-9_-]{0,62}))*$/
const ipv4 = /^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/

/**
 * A host as the WHATWG URL parser canonicalizes it (lower case, punycode, IPv4 in dotted decimal however
 * it was spelled, IPv6 compressed), without brackets or a trailing dot; undefined when it is no host.
 * The proxy canonicalizes what a client asks for the same way, so spellings cannot slip past a list.
 */
export function canonicalHost(raw: string): string | undefined {
  const bare = raw.startsWith('[') && raw.endsWith(']') ? raw.slice(1, -1) : raw
  if (bare === '' || /[\s/\\?#@%]/.test(bare)) return undefined
  let hostname: string
  try {
    hostname = new URL(bare.includes(':') ? `http://[${bare}]/` : `http://${bare}/`).hostname
  } catch {
    return undefined
  }
  if (hostname.startsWith('[')) return hostname.slice(1, -1)
  const name = hostname.replace(/\.$/, '')
  return ipv4.test(name) || (dnsName.test(name) && name.length <= 253) ? name : undefined
}

export function isIpAddress(host: string): boolean {
  return host.includes(':') || ipv4.test(host)
}

/** Parses one written entry; a preset yields its patterns. The string is a problem to report. */
export function parseEgressEntry(entry: string): HostPattern[] | string {
  const text = entry.trim()
  if (text.startsWith('@')) {
    const patterns = presetPatterns(text.slice(1))
    if (!patterns)
      return `${text} is not a preset (presets: ${presetNames()
        .map((name) => `@${name}`)
        .join(', ')})`
    return patterns.flatMap((pattern) => parseEgressEntry(pattern) as HostPattern[])
  }
  const match = /^(\*\.)?(\[[^\]]*\]|[^:]*)(?::(\d{1,5}))?$/.exec(text)
  if (!match) return `${text} is not host[:port]`
  const [, star, rawHost = '', rawPort] = match
  const port = rawPort === undefined ? undefined : Number(rawPort)
  if (port !== undefined && (port < 1 || port > 65_535)) return `${text}: port must be 1-65535`
  const host = canonicalHost(rawHost)
  if (!host) return `${text}: ${rawHost} is not a host name or IP address`
  if (star && isIpAddress(host)) return `${text}: a wildcard needs a domain name, not an address`
  return [{ host, wildcard: star !== undefined, port }]
}

/** The written form → a policy, or every problem found (each names its entry). */
export function parseEgress(text: EgressText): { policy: EgressPolicy } | { problems: string[] } {
  if (text === 'none' || text === 'public') return { policy: { mode: text } }
  const problems: string[] = []
  const allow: HostPattern[] = []
  for (const entry of text.allow) {
    const parsed = parseEgressEntry(entry)
    if (typeof parsed === 'string') problems.push(parsed)
    else allow.push(...parsed)
  }
  return problems.length > 0 ? { problems } : { policy: { mode: 'allow', allow: dedupe(allow) } }
}

/** egressTextSchema that yields the parsed policy (keys files). */
export const egressPolicySchema = egressTextSchema.transform((text, context): EgressPolicy => {
  const parsed = parseEgress(text)
  if ('policy' in parsed) return parsed.policy
  for (const problem of parsed.problems) context.addIssue({ code: 'custom', message: problem })
  return z.NEVER
})

export function formatPattern(pattern: HostPattern): string {
  const host = pattern.host.includes(':') ? `[${pattern.host}]` : pattern.host
  return `${pattern.wildcard ? '*.' : ''}${host}${pattern.port === undefined ? '' : `:${pattern.port}`}`
}

/** The written form of a policy, for results, dry runs and /v1/context. */
export function formatEgress(policy: EgressPolicy): EgressText {
  return policy.mode === 'allow' ? { allow: policy.allow.map(formatPattern) } : policy.mode
}

export function patternMatches(pattern: HostPattern, host: string, port: number): boolean {
  if (pattern.port !== undefined && pattern.port !== port) return false
  return pattern.wildcard ? host.endsWith(`.${pattern.host}`) : host === pattern.host
}

/** Does every target inner matches also match outer? */
export function patternCovers(outer: HostPattern, inner: HostPattern): boolean {
  if (outer.port !== undefined && outer.port !== inner.port) return false
  if (!outer.wildcard) return !inner.wildcard && inner.host === outer.host
  return inner.host.endsWith(`.${outer.host}`) || (inner.wildcard && inner.host === outer.host)
}

/**
 * What inner asks for beyond outer, in words ("public", or the first entry outer does not cover);
 * undefined when inner is within outer. A key or a call may narrow a policy, never widen it.
 */
export function egressBeyond(outer: EgressPolicy, inner: EgressPolicy): string | undefined {
  if (inner.mode === 'none' || outer.mode === 'public') return undefined
  if (outer.mode === 'none') return inner.mode === 'public' ? 'public' : formatPattern(inner.allow[0] as HostPattern)
  if (inner.mode === 'public') return 'public'
  const uncovered = inner.allow.find((pattern) => !outer.allow.some((candidate) => patternCovers(candidate, pattern)))
  return uncovered ? formatPattern(uncovered) : undefined
}

function dedupe(patterns: HostPattern[]): HostPattern[] {
  const seen = new Map<string, HostPattern>()
  for (const pattern of patterns) seen.set(formatPattern(pattern), pattern)
  return [...seen.values()]
}
