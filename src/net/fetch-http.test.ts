import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type LocalWeb, startLocalWeb } from '../../test/support/local-web'
import { createFetchHttpClient } from './fetch-http'

let web: LocalWeb
let hop = 0

beforeAll(async () => {
  web = await startLocalWeb({
    '/echo': (request, response, body) => {
      response.setHeader('content-type', 'application/json')
      response.end(JSON.stringify({ method: request.method, headers: request.headers, body }))
    },
    '/gzip': (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' })
      response.end(gzipSync('0123456789'.repeat(1000)))
    },
    '/to-private': (_request, response) => {
      response.writeHead(302, { location: 'http://10.1.2.3/secret' })
      response.end()
    },
    '/to-metadata': (_request, response) => {
      response.writeHead(307, { location: 'http://[::ffff:169.254.169.254]/latest/meta-data/' })
      response.end()
    },
    '/loop': (_request, response) => {
      hop++
      response.writeHead(302, { location: `/loop?n=${hop}` })
      response.end()
    },
    '/see-other': (_request, response) => {
      response.writeHead(303, { location: '/echo' })
      response.end()
    },
    '/cross-origin': (_request, response) => {
      response.writeHead(302, { location: `http://localhost:${web.port}/echo` })
      response.end()
    },
    '/slow': (_request, response) => {
      setTimeout(() => response.end('late'), 2_000)
    },
  })
})

afterAll(async () => {
  await web.stop()
})

const open = () => createFetchHttpClient({ policy: { allowHosts: [`127.0.0.1:${web.port}`] } })

describe('fetch HttpClient', () => {
  it('refuses private, loopback, link-local and metadata targets without contacting them', async () => {
    const client = createFetchHttpClient({ policy: { allowHosts: [] } })
    const before = web.hits.length
    for (const url of [
      `http://127.0.0.1:${web.port}/echo`,
      'http://0x7f.1/',
      'http://2130706433/',
      'http://10.0.0.1/',
      'http://192.168.1.1/',
      'http://169.254.169.254/latest/meta-data/',
      'http://[::1]/',
      'http://[fd00::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://localhost/',
      'http://api.localhost/',
      'http://metadata.google.internal/',
    ]) {
      await expect(client.request({ url }), url).rejects.toMatchObject({ code: 'permission_denied' })
    }
    expect(web.hits.length).toBe(before)
  })

  it('rejects non-http schemes and credentials in URLs', async () => {
    const client = open()
    await expect(client.request({ url: 'file:///etc/passwd' })).rejects.toMatchObject({ code: 'validation' })
    await expect(client.request({ url: 'http://user:pw@example.com/' })).rejects.toMatchObject({ code: 'validation' })
  })

  it('fetches an allowed host with method, headers and body', async () => {
    const response = await open().request({
      url: `${web.url}/echo`,
      method: 'POST',
      headers: { 'Content-Type': 'text/plain', 'X-Test': 'yes', Host: 'evil.example' },
      body: 'hello',
    })
    expect(response.status).toBe(200)
    expect(response.headers['content-type']).toBe('application/json')
    const echoed = JSON.parse(new TextDecoder().decode(response.body))
    expect(echoed).toMatchObject({ method: 'POST', body: 'hello' })
    expect(echoed.headers['x-test']).toBe('yes')
    expect(echoed.headers.host).toBe(`127.0.0.1:${web.port}`)
    expect(response).toMatchObject({ truncated: false, redirects: 0, finalUrl: `${web.url}/echo` })
  })

  it('caps the decompressed body at maxBytes', async () => {
    const response = await open().request({ url: `${web.url}/gzip`, maxBytes: 25 })
    expect(new TextDecoder().decode(response.body)).toBe('0123456789012345678901234')
    expect(response.truncated).toBe(true)
  })

  it('checks every redirect hop and refuses one that points inward', async () => {
    await expect(open().request({ url: `${web.url}/to-private` })).rejects.toMatchObject({
      code: 'permission_denied',
      message: expect.stringContaining('10.1.2.3'),
    })
    await expect(open().request({ url: `${web.url}/to-metadata` })).rejects.toMatchObject({
      code: 'permission_denied',
    })
  })

  it('follows at most 5 redirects', async () => {
    const before = web.hits.length
    await expect(open().request({ url: `${web.url}/loop` })).rejects.toMatchObject({
      code: 'connection',
      message: expect.stringContaining('5 redirects'),
    })
    expect(web.hits.length - before).toBe(6)
    await expect(open().request({ url: `${web.url}/loop`, maxRedirects: 1 })).rejects.toMatchObject({
      message: expect.stringContaining('1 redirects'),
    })
  })

  it('turns POST into GET on 303 and drops credentials on a cross-origin redirect', async () => {
    const seeOther = await open().request({ url: `${web.url}/see-other`, method: 'POST', body: 'x' })
    expect(JSON.parse(new TextDecoder().decode(seeOther.body))).toMatchObject({ method: 'GET', body: '' })
    expect(seeOther.redirects).toBe(1)

    const client = createFetchHttpClient({
      policy: { allowHosts: [`127.0.0.1:${web.port}`, `localhost:${web.port}`] },
    })
    const crossed = await client.request({
      url: `${web.url}/cross-origin`,
      headers: { Authorization: 'Bearer secret', 'X-Keep': 'kept' },
    })
    const echoed = JSON.parse(new TextDecoder().decode(crossed.body))
    expect(echoed.headers.authorization).toBeUndefined()
    expect(echoed.headers['x-keep']).toBe('kept')
    expect(crossed.finalUrl).toBe(`http://localhost:${web.port}/echo`)
  })

  it('reports a timeout and a refused connection as tool errors', async () => {
    await expect(open().request({ url: `${web.url}/slow`, timeoutMs: 200 })).rejects.toMatchObject({ code: 'timeout' })
    const closed = createFetchHttpClient({ policy: { allowHosts: ['127.0.0.1:1'] } })
    await expect(closed.request({ url: 'http://127.0.0.1:1/' })).rejects.toMatchObject({ code: 'connection' })
  })
})
