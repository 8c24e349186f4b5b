import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { Resolver } from '../../src/net/node-http'

const run = promisify(execFile)

/**
 * Upstream hosts for the egress suites, all on 127.0.0.1: an HTTP and an HTTPS server (a self-signed
 * certificate for fixture.test, made with openssl) that answer and record every request, a third
 * server nobody may reach, and endless and slow streams for the limits. Names resolve through
 * `resolve`, the DNS answers the proxy is given: fixture.test is 127.0.0.1, private.test a private
 * address, mixed.test a public and a loopback address at once.
 */
export interface EgressFixtures {
  /** HTTP: GET answers "fixture <path>", POST the bytes it received; /flood streams without end, /slow a byte at a time. */
  http: number
  https: number
  /** Reachable by address rules (in TOOLPORT_FETCH_ALLOW_HOSTS) but in no egress allow-list. */
  forbidden: number
  /** Listening on every interface of the host (0.0.0.0): what a command would reach with a network of its own. */
  everywhere: number
  /** Requests each server saw, by port. */
  hits: Map<number, string[]>
  /** PEM of the self-signed certificate, for --cacert / cafile inside the sandbox. */
  certificate: string
  resolve: Resolver
  close(): Promise<void>
}

export const fixtureHost = 'fixture.test'

export async function startEgressFixtures(): Promise<EgressFixtures> {
  const folder = await mkdtemp(join(tmpdir(), 'toolport-egress-cert-'))
  try {
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      join(folder, 'key.pem'),
      '-out',
      join(folder, 'cert.pem'),
      '-days',
      '2',
      '-subj',
      `/CN=${fixtureHost}`,
      '-addext',
      `subjectAltName=DNS:${fixtureHost},IP:127.0.0.1`,
    ])
    const certificate = await readFile(join(folder, 'cert.pem'), 'utf8')
    const key = await readFile(join(folder, 'key.pem'), 'utf8')
    const hits = new Map<number, string[]>()
    const servers: Server[] = []
    const listen = async (server: Server, address = '127.0.0.1'): Promise<number> => {
      servers.push(server)
      await new Promise<void>((resolve) => server.listen(0, address, resolve))
      const port = (server.address() as AddressInfo).port
      hits.set(port, [])
      return port
    }
    const handler = (request: IncomingMessage, response: ServerResponse) => {
      const port = request.socket.localPort ?? 0
      hits.get(port)?.push(`${request.method} ${request.url}`)
      answer(request, response)
    }
    const http = await listen(createServer(handler))
    const https = await listen(createHttpsServer({ cert: certificate, key }, handler))
    const forbidden = await listen(createServer(handler))
    const everywhere = await listen(createServer(handler), '0.0.0.0')
    const resolve: Resolver = async (host) => {
      if (host === fixtureHost) return [{ address: '127.0.0.1', family: 4 }]
      if (host === 'private.test') return [{ address: '10.0.0.7', family: 4 }]
      if (host === 'mixed.test')
        return [
          { address: '93.184.216.34', family: 4 },
          { address: '127.0.0.1', family: 4 },
        ]
      throw Object.assign(new Error(`no such host ${host}`), { code: 'ENOTFOUND' })
    }
    return {
      http,
      https,
      forbidden,
      everywhere,
      hits,
      certificate,
      resolve,
      async close() {
        for (const server of servers) server.closeAllConnections?.()
        await Promise.all(servers.map((server) => new Promise((done) => server.close(done))))
      },
    }
  } finally {
    await rm(folder, { recursive: true, force: true })
  }
}

function answer(request: IncomingMessage, response: ServerResponse): void {
  if (request.url === '/flood') {
    const chunk = Buffer.alloc(64 * 1024, 'x')
    response.writeHead(200, { 'content-type': 'application/octet-stream' })
    const pump = () => {
      while (response.write(chunk)) {}
    }
    response.on('drain', pump)
    pump()
    return
  }
  if (request.url === '/slow') {
    response.writeHead(200, { 'content-type': 'text/plain' })
    const timer = setInterval(() => response.write('.'), 200)
    response.on('close', () => clearInterval(timer))
    return
  }
  if (request.url?.startsWith('/bytes/')) {
    const url = new URL(request.url, 'http://fixture')
    let left = Number(url.pathname.slice('/bytes/'.length)) || 0
    // ?rate=bytes per second paces the body like a link of that speed (unset: as fast as the socket takes it).
    const rate = Number(url.searchParams.get('rate')) || 0
    response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(left) })
    const chunk = Buffer.alloc(64 * 1024, 'y')
    const started = performance.now()
    let sent = 0
    const pump = () => {
      while (left > 0) {
        const due = rate ? ((sent + chunk.byteLength) / rate) * 1000 - (performance.now() - started) : 0
        if (due > 1) {
          setTimeout(pump, due)
          return
        }
        const part = left >= chunk.byteLength ? chunk : chunk.subarray(0, left)
        left -= part.byteLength
        sent += part.byteLength
        if (!response.write(part)) return
      }
      response.end()
    }
    response.on('drain', pump)
    pump()
    return
  }
  let received = 0
  request.on('data', (chunk: Buffer) => {
    received += chunk.byteLength
  })
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'text/plain' })
    response.end(request.method === 'POST' ? `received ${received}\n` : `fixture ${request.url}\n`)
  })
}
