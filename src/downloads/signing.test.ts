import { describe, expect, it } from 'vitest'
import { contentDisposition } from '../core/mime'
import { createLinkSigner, fromBase64Url, toBase64Url } from './signing'

const claims = { tenant: 'acme', workspace: 'default', path: 'outputs/report.pdf', expiresAt: 2_000_000_000 }
const now = 1_900_000_000

describe('link signer', () => {
  const signer = createLinkSigner('s'.repeat(32))

  it('verifies its own tokens and returns the claims', async () => {
    const token = await signer.sign(claims)
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/)
    expect(await signer.verify(token, now)).toEqual({ ok: true, claims })
  })

  it('refuses expired tokens as expired, and only authentic ones', async () => {
    const token = await signer.sign(claims)
    expect(await signer.verify(token, claims.expiresAt)).toEqual({ ok: false, reason: 'expired' })
    const [payload] = token.split('.')
    const forged = `${payload}.${toBase64Url(new Uint8Array(32))}`
    expect(await signer.verify(forged, claims.expiresAt + 10)).toEqual({ ok: false, reason: 'invalid' })
  })

  it('refuses tampered tenant, workspace, path and expiry', async () => {
    const token = await signer.sign(claims)
    const [payload, signature] = token.split('.') as [string, string]
    const decoded = JSON.parse(new TextDecoder().decode(fromBase64Url(payload)))
    for (const [index, value] of [
      [1, 'other'],
      [2, 'secret-ws'],
      [3, 'outputs/other.pdf'],
      [4, claims.expiresAt + 3600],
    ] as const) {
      const changed = [...decoded]
      changed[index] = value
      const tampered = `${toBase64Url(new TextEncoder().encode(JSON.stringify(changed)))}.${signature}`
      expect(await signer.verify(tampered, now), String(index)).toEqual({ ok: false, reason: 'invalid' })
    }
  })

  it('refuses tokens of another secret and garbage of every shape', async () => {
    const other = createLinkSigner('o'.repeat(32))
    expect(await signer.verify(await other.sign(claims), now)).toEqual({ ok: false, reason: 'invalid' })
    const token = await signer.sign(claims)
    for (const garbage of [
      '',
      '.',
      'abc',
      'a.b.c',
      `${token}.x`,
      `${token}=`,
      token.replace('.', '..'),
      `${token.slice(0, -1)}A`,
      'x'.repeat(5000),
      '%00.%00',
      '..%2f..%2fetc%2fpasswd',
    ]) {
      expect(await signer.verify(garbage, now), garbage.slice(0, 40)).toEqual({ ok: false, reason: 'invalid' })
    }
  })

  it('refuses authentic tokens whose claims are malformed', async () => {
    const forgedButSigned = createLinkSigner('s'.repeat(32))
    const token = await forgedButSigned.sign({ ...claims, tenant: '../x' })
    expect(await signer.verify(token, now)).toEqual({ ok: false, reason: 'invalid' })
  })
})

describe('contentDisposition', () => {
  it('keeps ASCII names and adds filename* for others', () => {
    expect(contentDisposition('report.pdf')).toBe('attachment; filename="report.pdf"')
    expect(contentDisposition('Überblick 日本.pdf')).toBe(
      `attachment; filename="_berblick __.pdf"; filename*=UTF-8''%C3%9Cberblick%20%E6%97%A5%E6%9C%AC.pdf`,
    )
    expect(contentDisposition('a"b\\c.pdf')).toBe(`attachment; filename="a_b_c.pdf"; filename*=UTF-8''a%22b%5Cc.pdf`)
  })
})
