import { request } from 'node:http'
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BrowserProxy, startBrowserProxy } from '../../src/browser/browser-proxy'
import { createNodeHttpClient } from '../../src/net/node-http'
import { type LocalWeb, startLocalWeb } from '../support/local-web'

/** The browser's egress proxy on its own: what a Chromium (or anything on the host) can ask of it. */
let open: LocalWeb
let victim: LocalWeb
let proxy: BrowserProxy
const refusals: string[] = []

beforeAll(async () => {
  open = await startLocalWeb({
    '/hello': (request, response) => {
      response.setHeader('set-cookie', ['a=1', 'b=2'])
      response.end(`hello ${request.headers.host} ${request.headers['proxy-connection'] ?? 'no proxy header'}`)
    },
  })
  victim = await startLocalWeb({})
  const http = createNodeHttpClient({ policy: { allowHosts: [`127.0.0.1:${open.port}`] } })
  proxy = await startBrowserProxy({ resolve: http.resolve, onRefused: (target) => refusals.push(target) })
})
afterAll(async () => {
  await proxy.close()
  await open.stop()
  await victim.stop()
})

/** Sends a CONNECT and returns the proxy's status line. */
function tunnel(target: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(proxy.port, '127.0.0.1', () =>
      socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`),
    )
    socket.once('data', (chunk) => {
      resolve(chunk.toString().split('\r\n')[0] ?? '')
      socket.destroy()
    })
    socket.once('error', reject)
  })
}

function proxied(url: string): Promise<{ status: number; body: string; cookies: string[] }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: '127.0.0.1',
        port: proxy.port,
        path: url,
        headers: { host: new URL(url).host, 'proxy-connection': 'keep-alive' },
      },
      (response) => {
        let body = ''
        response.on('data', (chunk) => {
          body += chunk
        })
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body, cookies: response.headers['set-cookie'] ?? [] }),
        )
      },
    )
    outgoing.once('error', reject)
    outgoing.end()
  })
}

describe('the browser egress proxy', () => {
  it('tunnels to an opened host:port and forwards plain requests, without its own headers', async () => {
    expect(await tunnel(`127.0.0.1:${open.port}`)).toBe('HTTP/1.1 200 Connection Established')
    const answer = await proxied(`${open.url}/hello`)
    expect(answer).toEqual({
      status: 200,
      body: `hello 127.0.0.1:${open.port} no proxy header`,
      cookies: ['a=1', 'b=2'],
    })
  })

  it('refuses every other loopback port, metadata, private and odd spellings, and says so', async () => {
    const targets = [
      `127.0.0.1:${victim.port}`,
      `localhost:${victim.port}`,
      `[::1]:${victim.port}`,
      `127.1:${victim.port}`,
      '169.254.169.254:80',
      '10.0.0.1:443',
      `0x7f000001:${victim.port}`,
      `127.0.0.1:${open.port}/../x`,
    ]
    for (const target of targets) expect(await tunnel(target), target).toMatch(/^HTTP\/1\.1 40[03]/)
    expect((await proxied(`${victim.url}/x`)).status).toBe(403)
    expect((await proxied('http://169.254.169.254/latest/meta-data/')).status).toBe(403)
    expect(victim.hits).toEqual([])
    expect(victim.connections).toBe(0)
    expect(refusals).toContain(`127.0.0.1:${victim.port}`)
  })

  it('reaches nothing at all without a resolver', async () => {
    const closed = await startBrowserProxy({ resolve: undefined })
    try {
      const status = await new Promise<string>((resolve) => {
        const socket = connect(closed.port, '127.0.0.1', () =>
          socket.write(`CONNECT 127.0.0.1:${open.port} HTTP/1.1\r\n\r\n`),
        )
        socket.once('data', (chunk) => {
          resolve(chunk.toString().split('\r\n')[0] ?? '')
          socket.destroy()
        })
      })
      expect(status).toBe('HTTP/1.1 403 Forbidden')
    } finally {
      await closed.close()
    }
  })
})
