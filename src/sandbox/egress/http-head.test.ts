import { describe, expect, it } from 'vitest'
import { parseProxyRequest } from './http-head'

const head = (...lines: string[]) => Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1')

describe('parseProxyRequest', () => {
  it('reads CONNECT host:port, IPv6 literals included', () => {
    expect(parseProxyRequest(head('CONNECT example.org:443 HTTP/1.1', 'Host: example.org:443'))).toEqual({
      kind: 'connect',
      host: 'example.org',
      port: 443,
    })
    expect(parseProxyRequest(head('CONNECT [::1]:8443 HTTP/1.1'))).toMatchObject({ host: '[::1]', port: 8443 })
  })

  it('rewrites an absolute-form request to origin form without proxy or hop-by-hop headers', () => {
    const parsed = parseProxyRequest(
      head(
        'POST http://example.org:8080/a/b?c=1 HTTP/1.1',
        'Host: example.org:8080',
        'Proxy-Authorization: Basic eHg6eXk=',
        'Proxy-Connection: keep-alive',
        'Connection: keep-alive, X-Hop',
        'X-Hop: secret',
        'Content-Length: 3',
        'X-Kept: yes',
      ),
    )
    expect(parsed).toMatchObject({ kind: 'forward', host: 'example.org', port: 8080 })
    const text = parsed.kind === 'forward' ? parsed.head.toString('latin1') : ''
    expect(text).toBe(
      'POST /a/b?c=1 HTTP/1.1\r\nHost: example.org:8080\r\nContent-Length: 3\r\nX-Kept: yes\r\nConnection: close\r\n\r\n',
    )
  })

  it('adds a Host header when the client sent none, and defaults the port to 80', () => {
    const parsed = parseProxyRequest(head('GET http://[::1]/x HTTP/1.0'))
    expect(parsed).toMatchObject({ kind: 'forward', host: '::1', port: 80 })
    expect(parsed.kind === 'forward' && parsed.head.toString('latin1')).toContain('\r\nHost: [::1]\r\n')
  })

  it('refuses malformed and smuggling-shaped heads', () => {
    const bad = [
      head('GET /relative HTTP/1.1'),
      head('GET https://example.org/ HTTP/1.1'),
      head('GET ftp://example.org/ HTTP/1.1'),
      head('CONNECT example.org HTTP/1.1'),
      head('CONNECT example.org:443:1 HTTP/1.1'),
      head('CONNECT user@example.org:443 HTTP/1.1'),
      head('get http://example.org/ HTTP/1.1'),
      head('GET http://example.org/ HTTP/2.0'),
      head('GET http://example.org/  HTTP/1.1'),
      head('GET http://user:pw@example.org/ HTTP/1.1'),
      head('GET http://example.org/ HTTP/1.1', 'Bad Header: x'),
      head('GET http://example.org/ HTTP/1.1', ' folded: x'),
      head('GET http://example.org/ HTTP/1.1', 'X: a\nInjected: b'),
      head('GET http://example.org/ HTTP/1.1', 'X: \u0001'),
      head('GET http://exa mple.org/ HTTP/1.1'),
    ]
    for (const request of bad) {
      expect(parseProxyRequest(request).kind, JSON.stringify(request.toString('latin1'))).toBe('invalid')
    }
  })
})
