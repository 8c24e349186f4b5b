import type { Effect } from '../core/effects'
import { ToolError } from '../core/errors'
import type { ApiKey } from './keys'
import type { TokenVerifier } from './oauth/token-verifier'
import type { Principal } from './principal'

export interface Authenticator {
  readonly enabled: boolean
  /** Resolves the Authorization header to a principal, or throws unauthenticated. */
  authenticate(authorization: string | undefined): Promise<Principal>
}

const encoder = new TextEncoder()

async function digest(value: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(value)))
}

/** Compares two equal-length digests without an early exit, so timing reveals nothing. */
function digestsEqual(left: Uint8Array, right: Uint8Array): boolean {
  let difference = left.length ^ right.length
  for (let index = 0; index < left.length; index++) difference |= (left[index] ?? 0) ^ (right[index] ?? 0)
  return difference === 0
}

const unauthenticated = (message: string) =>
  new ToolError('unauthenticated', message, {
    hint: 'Send the header "Authorization: Bearer <key>" with a key issued for this service.',
    headers: { 'WWW-Authenticate': 'Bearer realm="toolport"' },
  })

/**
 * Keys are compared as SHA-256 digests in constant time, and every configured key is checked on
 * every call, so neither the key's length nor its position in the list shows in the timing.
 */
export function createAuthenticator(
  keys: readonly ApiKey[],
  options: { approvalPolicy?: readonly Effect[]; tokens?: TokenVerifier | undefined } = {},
): Authenticator {
  const tokens = options.tokens
  const anonymous: Principal = {
    id: 'anonymous',
    tenant: 'default',
    tools: undefined,
    requireApproval: new Set(),
    approver: false,
    egress: undefined,
    // With auth off the service serves loopback only: its one caller is the operator, who may manage sources.
    admin: true,
  }
  const hashed = Promise.all(
    keys.map(async (apiKey, index) => ({
      digest: await digest(apiKey.key),
      principal: {
        id: `key-${index + 1}`,
        tenant: apiKey.tenant,
        tools: apiKey.tools ? new Set(apiKey.tools) : undefined,
        requireApproval: new Set(requiredApprovals(apiKey, options.approvalPolicy ?? [])),
        approver: apiKey.approver === true,
        egress: apiKey.egress,
        admin: apiKey.admin === true,
      },
    })),
  )
  // Keys already proven valid skip the digest (WebCrypto's async hash is a large share of a small
  // call). Only exact valid keys are stored, so the map never holds more entries than keys exist,
  // and a wrong key always takes the full constant-time path.
  const proven = new Map<string, Principal>()
  return {
    enabled: keys.length > 0 || tokens !== undefined,
    async authenticate(authorization) {
      if (keys.length === 0 && !tokens) return anonymous
      if (!authorization) {
        throw unauthenticated(
          tokens ? 'This endpoint requires a bearer key or an access token.' : 'This endpoint requires a bearer key.',
        )
      }
      const match = /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(authorization)
      if (!match?.[1]) throw unauthenticated('The Authorization header must have the form "Bearer <key>".')
      const known = proven.get(match[1])
      if (known) return known
      // A token verified lately was compared with every key then (it matched none, and the keys are
      // fixed): its next uses skip the digest as a proven key does.
      const token = tokens?.remembered?.(match[1])
      if (token) return token
      const presented = await digest(match[1])
      let found: Principal | undefined
      for (const candidate of await hashed) {
        if (digestsEqual(candidate.digest, presented) && !found) found = candidate.principal
      }
      // Not a key: an access token of the configured issuer, when there is one (keys are checked first,
      // in constant time, whatever the value looks like).
      if (!found && tokens) return tokens.verify(match[1])
      if (!found) throw unauthenticated('The bearer key is not valid.')
      proven.set(match[1], found)
      return found
    },
  }
}

/**
 * The effects whose calls wait for an approver, for one key: its own entry's require_approval when it
 * has one (`[]` exempts it), otherwise the server's policy (TOOLPORT_APPROVAL). An approver key never
 * waits: it could approve its own calls.
 */
export function requiredApprovals(apiKey: ApiKey, policy: readonly Effect[]): readonly Effect[] {
  if (apiKey.require_approval) return apiKey.require_approval
  return apiKey.approver ? [] : policy
}
