import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../config/config'
import { toolNames } from '../../tools/builtins'
import { createTokenVerifier } from './token-verifier'

const issuer = 'https://idp.example.test'
const audience = 'https://tools.example.test/mcp'

async function setup() {
  const { publicKey, privateKey } = await generateKeyPair('ES256')
  const config = loadConfig(
    {
      TOOLPORT_PUBLIC_URL: 'https://tools.example.test',
      TOOLPORT_OAUTH_ISSUER: issuer,
      TOOLPORT_OAUTH_CLOCK_SKEW_SECONDS: '1',
    },
    { toolNames },
  )
  const verifier = createTokenVerifier({
    settings: { ...config.oauth, issuer },
    audiences: [audience],
    approvalPolicy: [],
    localKeys: [{ ...(await exportJWK(publicKey)), kid: 'one', alg: 'ES256' }],
  })
  const sign = (claims: Record<string, unknown>, expiresIn: number) =>
    new SignJWT({ toolport_tenant: 'acme', scope: 'tools:read', ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: 'one' })
      .setIssuer(issuer)
      .setAudience(audience)
      .setSubject('ada')
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + expiresIn)
      .sign(privateKey)
  return { verifier, sign }
}

describe('the token verifier', () => {
  it('verifies a token once and answers its next uses from memory, until it expires', async () => {
    const { verifier, sign } = await setup()
    const token = await sign({}, 2)
    expect(verifier.remembered?.(token)).toBeUndefined()
    const first = await verifier.verify(token)
    expect(verifier.remembered?.(token)).toBe(first)
    expect(first).toMatchObject({ tenant: 'acme', id: expect.stringMatching(/^oauth-/) })
    // The same principal object: no signature check the second time.
    expect(await verifier.verify(token)).toBe(first)
    await new Promise((resolve) => setTimeout(resolve, 3_100))
    expect(verifier.remembered?.(token)).toBeUndefined()
    await expect(verifier.verify(token)).rejects.toMatchObject({ code: 'unauthenticated' })
  })

  it('remembers nothing of a token that failed, nor of one of its look-alikes', async () => {
    const { verifier, sign } = await setup()
    const token = await sign({}, 60)
    await verifier.verify(token)
    const [header, payload, signature] = token.split('.') as [string, string, string]
    const tampered = `${header}.${payload}.${signature.slice(0, -4)}${signature.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`
    await expect(verifier.verify(tampered)).rejects.toMatchObject({ code: 'unauthenticated' })
    const expired = await sign({}, -5)
    await expect(verifier.verify(expired)).rejects.toMatchObject({ code: 'unauthenticated' })
    await expect(verifier.verify(expired)).rejects.toMatchObject({ code: 'unauthenticated' })
  })
})
