import { describe, expect, it } from 'vitest'
import { ToolError } from '../core/errors'
import { nextHop } from './redirects'

const from = { url: new URL('https://example.com/start'), method: 'GET' }
const hop = (location: string, status = 302, headers: Record<string, string> = {}) =>
  nextHop(from, { status, location }, headers, 0, 5)

describe('redirects', () => {
  it('follows a relative or absolute Location, and keeps credentials only on the same origin', () => {
    expect(hop('/next')?.url.href).toBe('https://example.com/next')
    const headers = { authorization: 'Bearer x', cookie: 'a=b' }
    expect(hop('https://other.example/', 307, headers)).toMatchObject({ method: 'GET', dropBody: false })
    expect(headers).toEqual({})
  })

  it("drops the caller's secret headers on a redirect to another origin only", () => {
    const same = { 'x-api-key': 'k', accept: 'application/json' }
    nextHop(from, { status: 307, location: '/again' }, same, 0, 5, ['X-Api-Key'])
    expect(same).toEqual({ 'x-api-key': 'k', accept: 'application/json' })
    const other = { 'x-api-key': 'k', accept: 'application/json' }
    nextHop(from, { status: 307, location: 'https://elsewhere.example/' }, other, 0, 5, ['X-Api-Key'])
    expect(other).toEqual({ accept: 'application/json' })
  })

  it.each([
    ['an unparsable Location', 'http://[::1', 'which is not a URL'],
    ['a file: URL', 'file:///etc/passwd', 'to a file: URL'],
    ['a javascript: URL', 'javascript:alert(1)', 'to a javascript: URL'],
    ['credentials in the URL', 'https://user:secret@example.com/', 'user name or password'],
  ])('answers 502 naming the redirect, not 400 on the caller’s url, for %s', (_, location, reason) => {
    let caught: unknown
    try {
      hop(location)
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(ToolError)
    expect(caught).toMatchObject({ code: 'connection', status: 502 })
    expect((caught as ToolError).message).toContain('example.com redirected')
    expect((caught as ToolError).message).toContain(reason)
    expect((caught as ToolError).details?.field).toBeUndefined()
    expect((caught as ToolError).message).not.toContain('secret')
  })
})
