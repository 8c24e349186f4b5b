import { isValidIdentifier } from '../core/paths'

/**
 * Signed download tokens for fs and memory storage, where no presigned URL exists. The token is the
 * credential: `base64url(claims).base64url(HMAC-SHA256(claims))`. Web Crypto only, so it works on
 * every runtime. Claims are checked only after the signature, so a forged token learns nothing.
 */
export interface LinkClaims {
  tenant: string
  workspace: string
  /** Normalized workspace path of the file. */
  path: string
  /** Unix time in seconds after which the link is refused. */
  expiresAt: number
}

export type VerifiedLink = { ok: true; claims: LinkClaims } | { ok: false; reason: 'invalid' | 'expired' }

export interface LinkSigner {
  sign(claims: LinkClaims): Promise<string>
  verify(token: string, nowSeconds?: number): Promise<VerifiedLink>
}

const version = 1
// A path is at most 768 bytes; JSON escaping and base64 leave the token well under this.
const maxTokenLength = 4096
const encoder = new TextEncoder()

export function toBase64Url(bytes: Uint8Array): string {
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '')
}

/** Returns undefined for anything that is not canonical base64url, so no two tokens decode alike. */
export function fromBase64Url(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return undefined
  const binary = atob(text.replaceAll('-', '+').replaceAll('_', '/'))
  const bytes = Uint8Array.from(binary, (character) => character.charCodeAt(0))
  return toBase64Url(bytes) === text ? bytes : undefined
}

function parseClaims(bytes: Uint8Array): LinkClaims | undefined {
  let value: unknown
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
  } catch {
    return undefined
  }
  if (!Array.isArray(value) || value.length !== 5 || value[0] !== version) return undefined
  const [, tenant, workspace, path, expiresAt] = value as unknown[]
  if (typeof tenant !== 'string' || typeof workspace !== 'string' || typeof path !== 'string') return undefined
  if (!isValidIdentifier(tenant) || !isValidIdentifier(workspace) || path === '') return undefined
  if (typeof expiresAt !== 'number' || !Number.isSafeInteger(expiresAt)) return undefined
  return { tenant, workspace, path, expiresAt }
}

/** The secret should have at least 32 bytes of entropy; config enforces a minimum length. */
export function createLinkSigner(secret: string | Uint8Array): LinkSigner {
  const keyBytes = typeof secret === 'string' ? encoder.encode(secret) : secret
  const key = crypto.subtle.importKey(
    'raw',
    keyBytes as Uint8Array<ArrayBuffer>,
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign', 'verify'],
  )
  return {
    async sign(claims) {
      const payload = encoder.encode(
        JSON.stringify([version, claims.tenant, claims.workspace, claims.path, claims.expiresAt]),
      )
      const signature = new Uint8Array(await crypto.subtle.sign('HMAC', await key, payload))
      return `${toBase64Url(payload)}.${toBase64Url(signature)}`
    },

    async verify(token, nowSeconds = Math.floor(Date.now() / 1000)) {
      if (typeof token !== 'string' || token.length > maxTokenLength) return { ok: false, reason: 'invalid' }
      const parts = token.split('.')
      if (parts.length !== 2) return { ok: false, reason: 'invalid' }
      const payload = fromBase64Url(parts[0] as string)
      const signature = fromBase64Url(parts[1] as string)
      if (!payload || !signature || signature.byteLength !== 32) return { ok: false, reason: 'invalid' }
      // subtle.verify compares in constant time.
      const authentic = await crypto.subtle.verify(
        'HMAC',
        await key,
        signature as Uint8Array<ArrayBuffer>,
        payload as Uint8Array<ArrayBuffer>,
      )
      if (!authentic) return { ok: false, reason: 'invalid' }
      const claims = parseClaims(payload)
      if (!claims) return { ok: false, reason: 'invalid' }
      if (nowSeconds >= claims.expiresAt) return { ok: false, reason: 'expired' }
      return { ok: true, claims }
    },
  }
}

/** A random secret for a process that was given none: its links stop working when it restarts. */
export function randomSecret(): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(32))
}
