import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose'
import { type LocalWeb, startLocalWeb } from './local-web'

/**
 * A minimal token issuer for tests of toolport as a resource server: RFC 8414 metadata and a JWKS on
 * 127.0.0.1, and tokens signed with its keys (jose), right or wrong on purpose. The full sign-in flow
 * runs against a real OpenID provider elsewhere; this one mints the tokens that flow never would.
 */
export interface TokenIssuer {
  issuer: string
  web: LocalWeb
  /** Signs claims (defaults: iss, sub, iat, exp in 5 minutes) with the current key, RS256. */
  sign(claims: JWTPayload, options?: { expiresIn?: string | number; notBefore?: string | number }): Promise<string>
  /** The current public key as a PEM-less JWK (what an HS256 confusion attack would use as the secret). */
  publicJwk(): JWK
  /** Replaces the signing key; the JWKS then publishes only the new one. */
  rotate(): Promise<void>
  /** Signs with a key the JWKS never published. */
  signWithUnknownKey(claims: JWTPayload): Promise<string>
  stop(): Promise<void>
}

export async function startTokenIssuer(): Promise<TokenIssuer> {
  let current = await newKey('key-1')
  let generation = 1
  const web = await startLocalWeb({
    '/.well-known/oauth-authorization-server': (_request, response) => {
      response.setHeader('content-type', 'application/json')
      response.end(
        JSON.stringify({
          issuer,
          jwks_uri: `${issuer}/jwks`,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          response_types_supported: ['code'],
          code_challenge_methods_supported: ['S256'],
        }),
      )
    },
    '/jwks': (_request, response) => {
      response.setHeader('content-type', 'application/json')
      response.end(JSON.stringify({ keys: [current.publicJwk] }))
    },
  })
  const issuer = web.url
  const sign = (
    key: Awaited<ReturnType<typeof newKey>>,
    claims: JWTPayload,
    options: { expiresIn?: string | number; notBefore?: string | number } = {},
  ) => {
    const jwt = new SignJWT({ sub: 'user-1', ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'at+jwt' })
      .setIssuer(typeof claims.iss === 'string' ? claims.iss : issuer)
      .setIssuedAt()
      .setExpirationTime(options.expiresIn ?? '5m')
    if (options.notBefore !== undefined) jwt.setNotBefore(options.notBefore)
    return jwt.sign(key.privateKey)
  }
  return {
    issuer,
    web,
    sign: (claims, options) => sign(current, claims, options),
    publicJwk: () => current.publicJwk,
    async rotate() {
      generation++
      current = await newKey(`key-${generation}`)
    },
    async signWithUnknownKey(claims) {
      return sign(await newKey('never-published'), claims)
    },
    stop: () => web.stop(),
  }
}

async function newKey(kid: string) {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true })
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } }
}
