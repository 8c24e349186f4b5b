import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ToolError } from '../../src/core/errors'
import { createNodeHttpClient, type Resolver } from '../../src/net/node-http'
import { addressProblem, isAllowedHost } from '../../src/net/outbound-guard'
import { type LocalWeb, startLocalWeb } from '../support/local-web'
import { startTestServer, type TestServer } from '../support/server'

let target: LocalWeb
let other: LocalWeb

// Fixed answers instead of real DNS: tests must not send traffic anywhere but loopback.
const dnsAnswers: Record<string, string[]> = {
  'internal.example': ['10.0.0.5'],
  'metadata-alias.example': ['169.254.169.254'],
  'mixed.example': ['93.184.216.34', '127.0.0.1'],
  'v6-loopback.example': ['::1'],
  'mapped.example': ['::ffff:127.0.0.1'],
  '127.0.0.1.nip.io': ['127.0.0.1'],
}
const resolver: Resolver = async (host) => {
  const answers = dnsAnswers[host]
  if (!answers) throw Object.assign(new Error(`no such host ${host}`), { code: 'ENOTFOUND' })
  return answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
}

beforeAll(async () => {
  target = await startLocalWeb({
    '/': (_request, response) => response.end('secret internal page'),
    '/to-other': (_request, response) => {
      response.writeHead(302, { location: `${other.url}/` })
      response.end()
    },
    '/to-metadata': (_request, response) => {
      response.writeHead(301, { location: 'http://169.254.169.254/latest/meta-data/iam/security-credentials/' })
      response.end()
    },
    '/to-localhost': (_request, response) => {
      response.writeHead(307, { location: `http://localhost:${target.port}/` })
      response.end()
    },
    '/to-v6': (_request, response) => {
      response.writeHead(308, { location: `http://[::1]:${target.port}/` })
      response.end()
    },
    '/to-file': (_request, response) => {
      response.writeHead(302, { location: 'file:///etc/passwd' })
      response.end()
    },
    '/loop': (_request, response) => {
      response.writeHead(302, { location: '/loop' })
      response.end()
    },
  })
  other = await startLocalWeb({ '/': (_request, response) => response.end('other internal service') })
})
afterAll(async () => {
  await target.stop()
  await other.stop()
})

function corpus(port: number): string[] {
  return [
    `http://127.0.0.1:${port}/`,
    `http://localhost:${port}/`,
    `http://LOCALHOST:${port}/`,
    `http://localhost.:${port}/`,
    `http://app.localhost:${port}/`,
    `http://127.1:${port}/`,
    `http://127.0.1:${port}/`,
    `http://0x7f.1:${port}/`,
    `http://0x7f000001:${port}/`,
    `http://2130706433:${port}/`,
    `http://017700000001:${port}/`,
    `http://0177.0.0.1:${port}/`,
    `http://127.000.000.001:${port}/`,
    `http://①②⑦.0.0.1:${port}/`,
    `http://[::1]:${port}/`,
    `http://[0:0:0:0:0:0:0:1]:${port}/`,
    `http://[::ffff:127.0.0.1]:${port}/`,
    `http://[::ffff:7f00:1]:${port}/`,
    `http://[0:0:0:0:0:ffff:127.0.0.1]:${port}/`,
    `http://[::127.0.0.1]:${port}/`,
    `http://[64:ff9b::127.0.0.1]:${port}/`,
    `http://[64:ff9b:1::7f00:1]:${port}/`,
    `http://[2002:7f00:1::]:${port}/`,
    `http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]:${port}/`,
    `http://0.0.0.0:${port}/`,
    `http://0:${port}/`,
    `http://[::]:${port}/`,
    'http://10.0.0.1/',
    'http://172.16.0.1/',
    'http://172.31.255.255/',
    'http://192.168.1.1/',
    'http://169.254.169.254/latest/meta-data/',
    'http://169.254.170.2/v2/credentials',
    'http://[fd00:ec2::254]/latest/meta-data/',
    'http://metadata.google.internal/computeMetadata/v1/',
    'http://METADATA.GOOGLE.INTERNAL./computeMetadata/v1/',
    'http://100.64.0.1/',
    'http://100.100.100.200/latest/meta-data/',
    'http://224.0.0.1/',
    'http://255.255.255.255/',
    'http://[fe80::1]/',
    'http://[fc00::1]/',
    'http://[ff02::1]/',
    'http://192.0.0.1/',
    'http://198.18.0.1/',
    'http://240.0.0.1/',
    `http://internal.example:${port}/`,
    `http://metadata-alias.example/`,
    `http://mixed.example:${port}/`,
    `http://v6-loopback.example:${port}/`,
    `http://mapped.example:${port}/`,
    `http://127.0.0.1.nip.io:${port}/`,
  ]
}

// The address rules themselves, then the outbound client that applies them, then the tools that use it.
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

describe('SSRF protection', () => {
  it('refuses every private, loopback, metadata and special address, however it is spelled', async () => {
    const client = createNodeHttpClient({ policy: { allowHosts: [] }, resolve: resolver })
    const urls = corpus(target.port)
    expect(urls.length).toBeGreaterThanOrEqual(40)
    for (const url of urls) {
      const failure = await client.request({ url, timeoutMs: 2_000 }).then(
        () => undefined,
        (error: unknown) => error,
      )
      expect(failure, url).toBeInstanceOf(ToolError)
      expect((failure as ToolError).code, `${url}: ${(failure as Error).message}`).toBe('permission_denied')
    }
    expect(target.hits).toEqual([])
  })

  it('refuses other schemes and credentials in URLs with 400', async () => {
    const client = createNodeHttpClient({ policy: { allowHosts: [] }, resolve: resolver })
    for (const url of [
      'file:///etc/passwd',
      'ftp://example.com/',
      'gopher://127.0.0.1:25/',
      'javascript:alert(1)',
      'http://user:pass@example.com/',
      'not a url',
      '//example.com',
    ]) {
      const failure = (await client.request({ url }).catch((error: unknown) => error)) as ToolError
      expect(failure.code, url).toBe('validation')
    }
  })

  it('re-checks every redirect hop: an allowed server cannot bounce a request inward', async () => {
    const client = createNodeHttpClient({ policy: { allowHosts: [`127.0.0.1:${target.port}`] }, resolve: resolver })
    for (const path of ['/to-other', '/to-metadata', '/to-localhost', '/to-v6']) {
      const failure = (await client
        .request({ url: `${target.url}${path}` })
        .catch((error: unknown) => error)) as ToolError
      expect(failure.code, path).toBe('permission_denied')
    }
    const file = (await client.request({ url: `${target.url}/to-file` }).catch((error: unknown) => error)) as ToolError
    // The server's redirect is at fault, not the caller's URL: 502 naming it, no field blamed.
    expect(file.code).toBe('connection')
    expect(file.message).toContain('redirected to a file: URL')
    const loop = (await client.request({ url: `${target.url}/loop` }).catch((error: unknown) => error)) as ToolError
    expect(loop.code).toBe('connection')
    expect(loop.message).toMatch(/5 redirects/)
    expect(other.hits).toEqual([])
  })

  it('connects to the address it checked: one lookup per hop, no second resolution by the socket', async () => {
    let lookups = 0
    const flipping: Resolver = async () => {
      lookups++
      // The first answer is the allowed local server; any later lookup would point elsewhere.
      return [{ address: lookups === 1 ? '127.0.0.1' : '127.0.0.2', family: 4 }]
    }
    const client = createNodeHttpClient({ policy: { allowHosts: [`flip.example:${target.port}`] }, resolve: flipping })
    const response = await client.request({ url: `http://flip.example:${target.port}/` })
    expect(new TextDecoder().decode(response.body)).toBe('secret internal page')
    expect(lookups).toBe(1)
    expect(target.hits.at(-1)?.headers.host).toBe(`flip.example:${target.port}`)
  })

  it('refuses a name whose answer flips from public to private on the next lookup', async () => {
    let lookups = 0
    const rebinding: Resolver = async () => {
      lookups++
      return [{ address: lookups === 1 ? '10.9.8.7' : '127.0.0.1', family: 4 }]
    }
    const client = createNodeHttpClient({ policy: { allowHosts: [] }, resolve: rebinding })
    const failure = (await client
      .request({ url: `http://rebind.example:${target.port}/` })
      .catch((error: unknown) => error)) as ToolError
    expect(failure.code).toBe('permission_denied')
    expect(lookups).toBe(1)
  })
})

/** A server on one loopback address that counts connections and answers which address it is. */
async function addressServer(host: string, port: number, options: { dropSecondRequest?: boolean } = {}) {
  let connections = 0
  const served = new WeakMap<object, number>()
  const server = createServer((request, response) => {
    const count = (served.get(request.socket) ?? 0) + 1
    served.set(request.socket, count)
    // A server that closed a kept-alive connection as the next request arrived on it.
    if (options.dropSecondRequest && count === 2) {
      request.socket.destroy()
      return
    }
    request.resume()
    request.on('end', () => response.end(host))
  })
  server.on('connection', () => connections++)
  await new Promise<void>((resolve) => server.listen(port, host, resolve))
  return {
    port: (server.address() as AddressInfo).port,
    get connections() {
      return connections
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

describe('kept-alive connections of the outbound client', () => {
  it('reuse a connection only for the address just checked: a changed answer connects afresh', async () => {
    const first = await addressServer('127.0.0.1', 0)
    const second = await addressServer('127.0.0.2', first.port)
    try {
      let answer = '127.0.0.1'
      const resolve: Resolver = async () => [{ address: answer, family: 4 }]
      const client = createNodeHttpClient({ policy: { allowHosts: [`pool.example:${first.port}`] }, resolve })
      const body = async () =>
        new TextDecoder().decode((await client.request({ url: `http://pool.example:${first.port}/` })).body)
      expect([await body(), await body(), await body()]).toEqual(['127.0.0.1', '127.0.0.1', '127.0.0.1'])
      expect(first.connections).toBe(1)
      answer = '127.0.0.2'
      expect(await body()).toBe('127.0.0.2')
      expect(second.connections).toBe(1)
      answer = '127.0.0.1'
      expect(await body()).toBe('127.0.0.1')
      expect(first.connections).toBe(1)
    } finally {
      await first.stop()
      await second.stop()
    }
  })

  it('send a request again on a new connection when the server closed the reused one as it arrived', async () => {
    const server = await addressServer('127.0.0.1', 0, { dropSecondRequest: true })
    try {
      const client = createNodeHttpClient({ policy: { allowHosts: [`127.0.0.1:${server.port}`] } })
      const url = `http://127.0.0.1:${server.port}/`
      const call = async () =>
        new TextDecoder().decode((await client.request({ url, method: 'POST', body: '{}' })).body)
      expect(await call()).toBe('127.0.0.1')
      expect(await call()).toBe('127.0.0.1')
      expect(server.connections).toBe(2)
    } finally {
      await server.stop()
    }
  })
})

describe('SSRF through the tools', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${other.port}` })
  })
  afterAll(async () => {
    await server.stop()
  })

  it('http_fetch and web_fetch answer 403 permission_denied with a hint for internal targets', async () => {
    const before = target.hits.length
    for (const tool of ['http_fetch', 'web_fetch']) {
      for (const url of [
        `http://127.0.0.1:${target.port}/`,
        `http://[::1]:${target.port}/`,
        'http://169.254.169.254/latest/meta-data/',
        `http://2130706433:${target.port}/`,
      ]) {
        const result = await server.call(tool, { url })
        expect(result.status, `${tool} ${url}`).toBe(403)
        expect(result.body).toMatchObject({ code: 'permission_denied', field: 'url' })
        expect(result.body.hint).toContain('TOOLPORT_FETCH_ALLOW_HOSTS')
      }
    }
    expect(target.hits.length).toBe(before)
  })

  it('still reaches a host the operator opened with TOOLPORT_FETCH_ALLOW_HOSTS', async () => {
    const result = await server.call('http_fetch', { url: `${other.url}/` })
    expect(result.status).toBe(200)
    expect(result.body).toMatchObject({ status_code: 200, body: 'other internal service' })
  })
})
