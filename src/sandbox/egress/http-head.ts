/**
 * The HTTP side of the egress proxy: a request head as a client sends it to a proxy, read strictly.
 * `CONNECT host:port` opens a tunnel (HTTPS, or anything else over TCP); an absolute-form request
 * (`GET http://host/path`) is forwarded once, rewritten to origin form with `Connection: close`, and
 * its body and the answer then pass unparsed. Nothing here opens a connection.
 */
export type ProxyRequest =
  | { kind: 'connect'; host: string; port: number }
  | { kind: 'forward'; host: string; port: number; head: Buffer }
  | { kind: 'invalid'; message: string }

const methodPattern = /^[A-Z]{1,20}$/
const headerPattern = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*?)[ \t]*$/
const authorityPattern = /^(\[[0-9A-Fa-f:.]{2,45}\]|[^\s:/[\]@]{1,253}):(\d{1,5})$/
// Hop-by-hop and proxy-only headers: meant for this proxy, never for the host behind it.
const dropped = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate'])

const invalid = (message: string): ProxyRequest => ({ kind: 'invalid', message })

export function parseProxyRequest(head: Buffer): ProxyRequest {
  const text = head.toString('latin1')
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text))
    return invalid('the request head holds control characters')
  const lines = text.replace(/\r\n\r\n$/, '').split('\r\n')
  const [method = '', target = '', version = '', ...extra] = (lines[0] ?? '').split(' ')
  if (!methodPattern.test(method) || extra.length > 0 || !/^HTTP\/1\.[01]$/.test(version) || target === '') {
    return invalid('the request line is not "METHOD target HTTP/1.1"')
  }
  const headers: Array<[string, string]> = []
  for (const line of lines.slice(1)) {
    const match = headerPattern.exec(line)
    if (!match || /[\r\n]/.test(line)) return invalid('a header line is malformed')
    headers.push([match[1] as string, match[2] as string])
  }
  if (method === 'CONNECT') {
    const authority = authorityPattern.exec(target)
    if (!authority) return invalid('CONNECT needs host:port')
    return { kind: 'connect', host: authority[1] as string, port: Number(authority[2]) }
  }
  if (/^https:\/\//i.test(target)) return invalid('https URLs go through CONNECT, not as a plain request')
  if (!/^http:\/\//i.test(target)) return invalid('a proxy request needs an absolute http:// URL')
  let url: URL
  try {
    url = new URL(target)
  } catch {
    return invalid('the URL is not valid')
  }
  if (url.username || url.password) return invalid('credentials in the URL are not forwarded; send a header')
  const named = new Set(
    headers
      .filter(([name]) => name.toLowerCase() === 'connection')
      .flatMap(([, value]) => value.split(',').map((token) => token.trim().toLowerCase())),
  )
  const kept = headers.filter(([name]) => !dropped.has(name.toLowerCase()) && !named.has(name.toLowerCase()))
  if (!kept.some(([name]) => name.toLowerCase() === 'host')) kept.unshift(['Host', url.host])
  const rewritten = [
    `${method} ${url.pathname}${url.search} HTTP/1.1`,
    ...kept.map(([name, value]) => `${name}: ${value}`),
    'Connection: close',
    '',
    '',
  ].join('\r\n')
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
  return { kind: 'forward', host, port: url.port ? Number(url.port) : 80, head: Buffer.from(rewritten, 'latin1') }
}

/** A complete answer of the proxy itself (a refusal, an error); the connection closes after it. */
export function proxyAnswer(status: number, reason: string, body: string, extra: Record<string, string> = {}): Buffer {
  const payload = Buffer.from(body, 'utf8')
  const lines = [
    `HTTP/1.1 ${status} ${reason}`,
    'Content-Type: text/plain; charset=utf-8',
    `Content-Length: ${payload.byteLength}`,
    'Connection: close',
    ...Object.entries(extra).map(([name, value]) => `${name}: ${value}`),
    '',
    '',
  ]
  return Buffer.concat([Buffer.from(lines.join('\r\n'), 'latin1'), payload])
}

export const tunnelOpen = Buffer.from('HTTP/1.1 200 Connection established\r\n\r\n', 'latin1')
