import { describe, expect, it } from 'vitest'
import { addressProblem, isAllowedHost } from './ssrf'

describe('addressProblem', () => {
  it('lets globally routable unicast addresses through', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '93.184.216.34', '2001:4860:4860::8888', '2606:4700:4700::1111']) {
      expect(addressProblem(address), address).toBeUndefined()
    }
  })

  it('names the class of every refused address', () => {
    expect(addressProblem('127.0.0.1')).toBe('127.0.0.1 is a loopback address')
    expect(addressProblem('::ffff:7f00:1')).toBe('::ffff:7f00:1 is an IPv4-mapped (ipv4Mapped) address')
    expect(addressProblem('10.1.2.3')).toMatch(/private/)
    expect(addressProblem('169.254.169.254')).toMatch(/linkLocal/)
    expect(addressProblem('100.64.1.1')).toMatch(/carrierGradeNat/)
    expect(addressProblem('::ffff:10.0.0.1')).toMatch(/ipv4Mapped/)
    expect(addressProblem('::7f00:1')).toMatch(/special-purpose/)
    expect(addressProblem('64:ff9b::a00:1')).toMatch(/rfc6052/)
    expect(addressProblem('2002:a00:1::')).toMatch(/6to4/)
    expect(addressProblem('fe80::1%eth0')).toMatch(/linkLocal/)
    expect(addressProblem('not-an-ip')).toMatch(/not an IP/)
  })
})

describe('isAllowedHost', () => {
  it('matches host, or host and port, case-insensitively', () => {
    const policy = { allowHosts: ['127.0.0.1:8080', 'Internal.API', '[::1]:9000'] }
    expect(isAllowedHost(new URL('http://127.0.0.1:8080/x'), policy)).toBe(true)
    expect(isAllowedHost(new URL('http://127.0.0.1:8081/x'), policy)).toBe(false)
    expect(isAllowedHost(new URL('https://internal.api/x'), policy)).toBe(true)
    expect(isAllowedHost(new URL('http://internal.api:1234/x'), policy)).toBe(true)
    expect(isAllowedHost(new URL('http://[::1]:9000/'), policy)).toBe(true)
    expect(isAllowedHost(new URL('http://evil-internal.api/'), policy)).toBe(false)
    expect(isAllowedHost(new URL('http://127.0.0.1/'), policy)).toBe(false)
  })
})
