import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestServer } from '../support/server'

// Links (file links, job status_url and Location, approval approve_url) must not follow a forged Host
// header: one would hand a download token, or an approver's key, to another origin.

// biome-ignore lint/suspicious/noExplicitAny: tests inspect arbitrary JSON
type Answer = { status: number; headers: Record<string, string | string[] | undefined>; body: any }

/** An HTTP request with a Host header of our choosing (fetch does not let a caller set it). */
function send(server: TestServer, method: string, path: string, host: string, body?: unknown, key = direct) {
  const { port } = new URL(server.url)
  const payload = body === undefined ? undefined : JSON.stringify(body)
  return new Promise<Answer>((resolve, reject) => {
    const outgoing = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: {
          host,
          ...(payload ? { 'content-type': 'application/json' } : {}),
          authorization: `Bearer ${key}`,
        },
      },
      (response) => {
        let text = ''
        response.setEncoding('utf8')
        response.on('data', (chunk) => {
          text += chunk
        })
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: text ? JSON.parse(text) : undefined,
          }),
        )
      },
    )
    outgoing.on('error', reject)
    outgoing.end(payload)
  })
}

const gated = 'acme-gated-key-0123456789'
const direct = 'acme-direct-key-0123456789'
const fileKeys = [
  { tenant: 'acme', key: gated, require_approval: ['write' as const] },
  { tenant: 'acme', key: direct },
]

/** Every link a forged Host could reach: a file link, a job's status_url (202 and when polled), an approve_url. */
async function linksFor(server: TestServer, host: string): Promise<string[]> {
  const pdf = await send(server, 'POST', '/v1/tools/pdf_generation', host, { content: 'x', content_type: 'text' })
  expect(pdf.status, JSON.stringify(pdf.body)).toBe(200)
  const job = await send(server, 'POST', '/v1/tools/list_files?async=true', host, {})
  expect(job.status).toBe(202)
  const polled = await send(server, 'GET', `/v1/jobs/${job.body.job_id}`, host)
  const approval = await send(server, 'POST', '/v1/tools/write_file', host, { path: 'a.txt', content: 'a' }, gated)
  expect(approval.status).toBe(202)
  return [
    pdf.body.files[0].url,
    job.body.status_url,
    job.headers.location as string,
    polled.body.status_url,
    approval.body.approve_url,
  ]
}

describe('link origins without TOOLPORT_PUBLIC_URL', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({}, { fileKeys })
  })
  afterAll(() => server.stop())

  it('points links at loopback hosts a request comes in on', async () => {
    const { port } = new URL(server.url)
    for (const link of await linksFor(server, `127.0.0.1:${port}`)) expect(link).toMatch(`http://127.0.0.1:${port}/v1/`)
    for (const link of await linksFor(server, `localhost:${port}`)) expect(link).toMatch(`http://localhost:${port}/v1/`)
  })

  // The middleware keeps its last answer for the URL's start: hosts that alternate, or that share a
  // trusted host's first characters, must each get their own answer.
  it('answers each Host on its own when trusted and forged hosts alternate', async () => {
    const { port } = new URL(server.url)
    const trusted = `127.0.0.1:${port}`
    const hosts = [
      trusted,
      'attacker.example',
      trusted,
      `localhost:${port}`,
      `127.0.0.1.attacker.example:${port}`,
      trusted,
      `${trusted}@attacker.example`,
      `attacker.example\\@${trusted}`,
      trusted,
    ]
    for (const host of hosts) {
      const job = await send(server, 'POST', '/v1/tools/list_files?async=true', host, {})
      // A Host that is no host at all (userinfo in it) is refused before any link is built.
      if (host.includes('@') && job.status === 400) continue
      expect(job.status, host).toBe(202)
      const link: string = job.body.status_url
      if (host === trusted || host === `localhost:${port}`) expect(link, host).toMatch(`http://${host}/v1/`)
      else {
        expect(link, host).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\//)
        expect(link, host).not.toContain('attacker')
      }
    }
  })

  it('never points a link at a forged Host: they go to the listen address', async () => {
    for (const host of ['attacker.example', 'attacker.example:443', '169.254.169.254', '[2001:db8::1]:8080']) {
      for (const link of await linksFor(server, host)) {
        expect(link, host).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\//)
        expect(link).not.toContain(host.replace(/:\d+$/, ''))
      }
    }
  })
})

describe('link origins with TOOLPORT_ALLOWED_HOSTS', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ TOOLPORT_ALLOWED_HOSTS: 'tools.example.com, Intranet:8443' }, { fileKeys })
  })
  afterAll(() => server.stop())

  it('uses the listed hosts (any port, or the one listed) and nothing else, loopback included', async () => {
    for (const link of await linksFor(server, 'tools.example.com')) expect(link).toMatch('http://tools.example.com/v1/')
    for (const link of await linksFor(server, 'intranet:8443')) expect(link).toMatch('http://intranet:8443/v1/')
    for (const host of ['intranet:9999', 'tools.example.com.attacker.example', 'localhost']) {
      for (const link of await linksFor(server, host)) expect(link, host).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\//)
    }
  })
})

describe('link origins with TOOLPORT_PUBLIC_URL', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer(
      { TOOLPORT_PUBLIC_URL: 'https://tools.example.com/', TOOLPORT_ALLOWED_HOSTS: 'other.example' },
      { fileKeys },
    )
  })
  afterAll(() => server.stop())

  it('uses the public URL whatever the Host', async () => {
    for (const host of ['attacker.example', 'other.example', '127.0.0.1']) {
      for (const link of await linksFor(server, host)) expect(link, host).toMatch('https://tools.example.com/v1/')
    }
  })
})
