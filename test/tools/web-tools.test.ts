import { readFile } from 'node:fs/promises'
import { constants, createBrotliCompress, createGzip, gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseBraveResults } from '../../src/net/search/brave'
import { parseDuckDuckGoResults } from '../../src/net/search/duckduckgo'
import { type LocalWeb, startLocalWeb } from '../support/local-web'
import { startTestServer, type TestServer } from '../support/server'

const fixture = (name: string) => readFile(new URL(`../fixtures/pages/${name}`, import.meta.url), 'utf8')

let web: LocalWeb
let server: TestServer

beforeAll(async () => {
  const news = await fixture('news-article.html')
  const docs = await fixture('docs-page.html')
  web = await startLocalWeb({
    '/echo': (request, response, body) => {
      response.setHeader('content-type', 'application/json')
      response.setHeader('x-custom', 'yes')
      response.end(JSON.stringify({ method: request.method, headers: request.headers, body }))
    },
    '/binary': (_request, response) => {
      response.setHeader('content-type', 'application/octet-stream')
      response.end(Buffer.from(Array.from({ length: 256 }, (_, index) => index)))
    },
    '/big': (_request, response) => {
      response.setHeader('content-type', 'text/plain')
      response.end('0123456789'.repeat(300_000))
    },
    '/gzip': (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' })
      response.end(gzipSync('compressed hello'))
    },
    '/bomb': (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' })
      response.end(gzipSync(Buffer.alloc(200 * 1024 * 1024, 97)))
    },
    // A compressed body that starts, then stalls: the decompressor must end with the response.
    '/stall-gzip': (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' })
      const gzip = createGzip()
      gzip.pipe(response)
      gzip.write('<html><body><p>the start of a page')
      gzip.flush()
    },
    '/stall-br': (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'br' })
      const brotli = createBrotliCompress()
      brotli.pipe(response)
      brotli.write('the start')
      brotli.flush(constants.BROTLI_OPERATION_FLUSH)
    },
    '/slow': (_request, response) => {
      setTimeout(() => response.end('late'), 3_000)
    },
    '/latin1': (_request, response) => {
      response.setHeader('content-type', 'text/plain; charset=iso-8859-1')
      response.end(Buffer.from([0x63, 0x61, 0x66, 0xe9]))
    },
    '/redirect': (_request, response) => {
      response.writeHead(303, { location: '/echo' })
      response.end()
    },
    '/news': (_request, response) => {
      response.setHeader('content-type', 'text/html; charset=utf-8')
      response.end(news)
    },
    '/docs/streams.html': (_request, response) => {
      response.setHeader('content-type', 'text/html; charset=utf-8')
      response.end(docs)
    },
    '/search': (request, response) => {
      const query = new URL(request.url ?? '', 'http://x').searchParams
      response.setHeader('content-type', 'application/json')
      response.end(
        JSON.stringify({
          query: query.get('q'),
          results: [
            { title: 'First', url: 'https://one.example/', content: 'first snippet', engine: 'x' },
            { title: 'Second', url: 'https://two.example/', content: 'second snippet' },
            { title: 'Bad', url: 'javascript:alert(1)', content: 'dropped' },
            { title: 'Third', url: 'https://three.example/', content: 'third snippet' },
          ],
        }),
      )
    },
  })
  server = await startTestServer({
    TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${web.port}`,
    TOOLPORT_SEARXNG_URL: `${web.url}`,
  })
})
afterAll(async () => {
  await server.stop()
  await web.stop()
})

describe('http_fetch', () => {
  it('round-trips methods, headers and bodies', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const result = await server.call('http_fetch', {
        url: `${web.url}/echo`,
        method,
        headers: { 'content-type': 'application/json', 'x-trace': 'abc' },
        body: '{"hello":"world"}',
      })
      expect(result.status).toBe(200)
      expect(result.body).toMatchObject({ status_code: 200, body_encoding: 'text', truncated: false })
      const echoed = JSON.parse(result.body.body)
      expect(echoed).toMatchObject({ method, body: '{"hello":"world"}' })
      expect(echoed.headers['x-trace']).toBe('abc')
      expect(result.body.headers['x-custom']).toBe('yes')
    }
    const head = await server.call('http_fetch', { url: `${web.url}/echo`, method: 'HEAD' })
    expect(head.body).toMatchObject({ status_code: 200, body: '' })
  })

  it('takes headers as a list of { name, value } too (the shape OpenAI strict mode sends), joining repeats', async () => {
    const result = await server.call('http_fetch', {
      url: `${web.url}/echo`,
      headers: [
        { name: 'X-Trace', value: 'abc' },
        { name: 'Accept-Language', value: 'de' },
        { name: 'accept-language', value: 'en' },
      ],
    })
    expect(result.status).toBe(200)
    const echoed = JSON.parse(result.body.body)
    expect(echoed.headers['x-trace']).toBe('abc')
    expect(echoed.headers['accept-language']).toBe('de, en')
    const bad = await server.call('http_fetch', { url: `${web.url}/echo`, headers: [{ name: 'X', value: 1 }] })
    expect(bad.status).toBe(400)
  })

  it('drops hop-by-hop headers the caller sends and rejects header injection', async () => {
    const result = await server.call('http_fetch', {
      url: `${web.url}/echo`,
      headers: { Connection: 'close, x-secret', 'Transfer-Encoding': 'chunked', Host: 'evil.example', 'X-Keep': '1' },
    })
    const echoed = JSON.parse(result.body.body)
    expect(echoed.headers.host).toBe(`127.0.0.1:${web.port}`)
    expect(echoed.headers['x-keep']).toBe('1')
    expect(echoed.headers['transfer-encoding']).toBeUndefined()
    const injected = await server.call('http_fetch', {
      url: `${web.url}/echo`,
      headers: { 'x-a': 'b\r\nx-injected: 1' },
    })
    expect(injected.status).toBe(400)
    expect(injected.body.field).toBe('headers')
  })

  it('answers 400 naming the header for a value HTTP cannot carry, never 502', async () => {
    const before = web.hits.length
    for (const value of ['snow \u2603', 'bell \u0007', 'nul \u0000', 'del \u007f', 'line \u2028']) {
      const result = await server.call('http_fetch', { url: `${web.url}/echo`, headers: { 'X-Odd': value } })
      expect(result.status, JSON.stringify(value)).toBe(400)
      expect(result.body).toMatchObject({ code: 'validation', field: 'headers', header: 'X-Odd' })
      expect(result.body.detail).toContain('"X-Odd"')
      expect(result.body.hint).toMatch(/U\+00FF/)
    }
    // Nothing was sent for any of them; latin-1 and tabs still go through.
    expect(web.hits.length).toBe(before)
    const latin = await server.call('http_fetch', { url: `${web.url}/echo`, headers: { 'X-Latin': 'caf\u00e9\tok' } })
    expect(latin.status).toBe(200)
    expect(JSON.parse(latin.body.body).headers['x-latin']).toBe(
      Buffer.from('caf\u00e9\tok', 'latin1').toString('latin1'),
    )
  })

  it('follows a 303 as GET and reports the final URL', async () => {
    const result = await server.call('http_fetch', { url: `${web.url}/redirect`, method: 'POST', body: 'x' })
    expect(result.body.final_url).toBe(`${web.url}/echo`)
    expect(JSON.parse(result.body.body).method).toBe('GET')
  })

  it('returns binary bodies as base64 and decodes declared charsets', async () => {
    const binary = await server.call('http_fetch', { url: `${web.url}/binary` })
    expect(binary.body.body_encoding).toBe('base64')
    expect([...Buffer.from(binary.body.body, 'base64')]).toEqual(Array.from({ length: 256 }, (_, index) => index))
    const latin = await server.call('http_fetch', { url: `${web.url}/latin1` })
    expect(latin.body.body).toBe('café')
  })

  it('caps the body (max_bytes, 100,000-character responses) and decompresses safely', async () => {
    const capped = await server.call('http_fetch', { url: `${web.url}/big`, max_bytes: 1000 })
    expect(capped.body).toMatchObject({ truncated: true, body: '0123456789'.repeat(100) })
    const response = await fetch(`${server.url}/v1/tools/http_fetch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${web.url}/big` }),
    })
    const text = await response.text()
    expect(text.length).toBeLessThanOrEqual(100_000)
    expect(JSON.parse(text).truncated).toBe(true)
    expect((await server.call('http_fetch', { url: `${web.url}/gzip` })).body.body).toBe('compressed hello')
    const bomb = await server.call('http_fetch', { url: `${web.url}/bomb`, max_bytes: 4096 })
    expect(bomb.body).toMatchObject({ truncated: true })
    expect(bomb.body.body).toBe('a'.repeat(4096))
  })

  it('times out with 504 and fails to connect with 502', async () => {
    const slow = await server.call('http_fetch', { url: `${web.url}/slow`, timeout_seconds: 1 })
    expect(slow.status).toBe(504)
    expect(slow.body.code).toBe('timeout')
    for (const path of ['/stall-gzip', '/stall-br']) {
      const stalled = await server.call('http_fetch', { url: `${web.url}${path}`, timeout_seconds: 1 })
      expect(stalled.status, path).toBe(504)
      expect(stalled.body.code).toBe('timeout')
    }
    const closed = await startTestServer({ TOOLPORT_FETCH_ALLOW_HOSTS: '127.0.0.1:1' })
    try {
      const refused = await closed.call('http_fetch', { url: 'http://127.0.0.1:1/' })
      expect(refused.status).toBe(502)
      expect(refused.body.code).toBe('connection')
    } finally {
      await closed.stop()
    }
  })
})

describe('web_fetch', () => {
  it('extracts a news article: title, byline, body text with links, without navigation, ads or comments', async () => {
    const result = await server.call('web_fetch', { url: `${web.url}/news` })
    expect(result.status).toBe(200)
    const page = result.body
    expect(page.title).toContain('City council approves riverside park expansion')
    expect(page.byline).toContain('Maria Okafor')
    expect(page.site_name).toBe('The Daily Ledger')
    expect(page.content).toContain('The city council voted 7–2 on Thursday evening')
    expect(page.content).toContain('## Costs and funding')
    expect(page.content).toContain(`[city's planning portal](${web.url}/documents/riverside-expansion.pdf)`)
    expect(page.content).toMatch(/^-\s+Wetland gardens/m)
    for (const noise of [
      'Subscribe',
      'Advertisement',
      'We use cookies',
      'First! Great news',
      'All rights reserved',
      'dataLayer',
    ]) {
      expect(page.content, noise).not.toContain(noise)
    }
  })

  it('keeps block breaks in text: headings, paragraphs and list items on lines of their own', async () => {
    const text = await server.call('web_fetch', { url: `${web.url}/news`, format: 'text' })
    expect(text.status).toBe(200)
    expect(text.body.content).toMatch(/public consultations\.\n\nThe plan converts/)
    expect(text.body.content).toMatch(/\n\nCosts and funding\n\nThe project is budgeted/)
    expect(text.body.content).toMatch(/heavy rain\nA playground/)
    expect(text.body.content).not.toMatch(/consultations\.The plan/)
  })

  it('extracts a documentation page with code, notes and tables as text or HTML', async () => {
    const text = await server.call('web_fetch', { url: `${web.url}/docs/streams.html`, format: 'text' })
    expect(text.body.content).toContain('Large files should never be read into memory at once')
    expect(text.body.content).toContain('client.open("logs/app.log")')
    expect(text.body.content).toContain('Object storage')
    expect(text.body.content).not.toContain('Search docs')
    const html = await server.call('web_fetch', { url: `${web.url}/docs/streams.html`, format: 'html', max_chars: 500 })
    expect(html.body).toMatchObject({ format: 'html', truncated: true })
    expect(html.body.content.length).toBeLessThanOrEqual(500)
    expect(html.body.content).not.toContain('<script')
  })

  it('refuses binary content with a hint towards http_fetch', async () => {
    const result = await server.call('web_fetch', { url: `${web.url}/binary` })
    expect(result.status).toBe(400)
    expect(result.body.hint).toContain('http_fetch')
  })
})

describe('web_search', () => {
  it('queries a SearXNG-compatible JSON API', async () => {
    const result = await server.call('web_search', { query: 'bubblewrap sandbox', count: 3 })
    expect(result.status).toBe(200)
    expect(result.body).toEqual({
      query: 'bubblewrap sandbox',
      provider: 'searxng',
      results: [
        { title: 'First', url: 'https://one.example/', snippet: 'first snippet' },
        { title: 'Second', url: 'https://two.example/', snippet: 'second snippet' },
        { title: 'Third', url: 'https://three.example/', snippet: 'third snippet' },
      ],
    })
    expect(web.hits.at(-1)?.url).toContain('q=bubblewrap+sandbox')
    expect(web.hits.at(-1)?.url).toContain('format=json')
  })

  it('parses a DuckDuckGo HTML results page, skipping ads and non-http links', async () => {
    const results = await parseDuckDuckGoResults(await fixture('duckduckgo-results.html'), 10)
    expect(results).toEqual([
      {
        title: 'GitHub - containers/bubblewrap: Low-level unprivileged sandboxing tool',
        url: 'https://github.com/containers/bubblewrap',
        snippet: 'Low-level unprivileged sandboxing tool used by Flatpak and similar projects.',
      },
      {
        title: 'Bubblewrap - ArchWiki',
        url: 'https://wiki.archlinux.org/title/Bubblewrap',
        snippet: 'Bubblewrap is a lightweight sandbox application used by Flatpak and other container tools.',
      },
      expect.objectContaining({ url: 'https://manpages.debian.org/bookworm/bubblewrap/bwrap.1.en.html' }),
    ])
    expect(await parseDuckDuckGoResults(await fixture('duckduckgo-results.html'), 1)).toHaveLength(1)
  })

  it('parses Brave Search API answers', () => {
    const json = JSON.stringify({
      web: {
        results: [{ title: 'A <strong>b</strong>', url: 'https://a.example/', description: 'x <strong>y</strong>' }],
      },
    })
    expect(parseBraveResults(json, 5)).toEqual([{ title: 'A b', url: 'https://a.example/', snippet: 'x y' }])
  })

  it('answers 503 with the settings to set when no provider is configured', async () => {
    const bare = await startTestServer()
    try {
      const result = await bare.call('web_search', { query: 'x' })
      expect(result.status).toBe(503)
      expect(result.body.hint).toContain('TOOLPORT_SEARXNG_URL')
    } finally {
      await bare.stop()
    }
  })
})

describe('system_info and get_env', () => {
  it('describes the machine and what is available', async () => {
    const result = await server.call('system_info', {})
    expect(result.status).toBe(200)
    expect(result.body).toMatchObject({ os: 'Linux', runtime: 'node', web: { fetch: true, search: 'searxng' } })
    expect(result.body.available_processors).toBeGreaterThan(0)
    expect(result.body.total_memory_bytes).toBeGreaterThan(result.body.free_memory_bytes)
    expect(result.body.total_storage_bytes).toBeGreaterThan(0)
  })

  it('reads only allowed variables, never the service secrets', async () => {
    const allowed = await startTestServer({ TOOLPORT_ENV_ALLOW: 'APP_REGION,APP_UNSET', APP_REGION: 'eu-west-1' })
    try {
      expect((await allowed.call('get_env', { name: 'APP_REGION' })).body).toEqual({
        name: 'APP_REGION',
        value: 'eu-west-1',
      })
      expect((await allowed.call('get_env', { name: 'APP_UNSET' })).status).toBe(404)
      for (const name of [
        'PATH',
        'HOME',
        'TOOLPORT_API_KEYS',
        'AWS_SECRET_ACCESS_KEY',
        '__proto__',
        'constructor',
        'toString',
      ]) {
        const refused = await allowed.call('get_env', { name })
        expect(refused.status, name).toBe(403)
        expect(refused.body.hint).toContain('APP_REGION')
      }
    } finally {
      await allowed.stop()
    }
  })
})
