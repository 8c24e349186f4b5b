import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createChromiumBrowser } from '../../src/browser/chromium'
import { silentLogger } from '../../src/core/logger'
import { createNodeHttpClient } from '../../src/net/node-http'
import { chromiumChildren } from '../support/chromium'
import { type LocalWeb, startLocalWeb } from '../support/local-web'
import { startTestServer, type TestServer } from '../support/server'

/** Width and height from a PNG's IHDR chunk. */
function pngSize(bytes: Uint8Array): { width: number; height: number } {
  expect([...bytes.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  return { width: view.getUint32(16), height: view.getUint32(20) }
}

let site: LocalWeb
let forbidden: LocalWeb
let server: TestServer

beforeAll(async () => {
  forbidden = await startLocalWeb({ '/pixel.png': (_request, response) => response.end('should never be asked for') })
  site = await startLocalWeb({
    '/': (_request, response) => {
      response.setHeader('content-type', 'text/html')
      response.end(
        `<!doctype html><html><body style="margin:0;background:#1a73e8"><h1 style="color:white">Hello</h1>` +
          `<div style="height:2000px"></div><img src="http://127.0.0.1:${forbidden.port}/pixel.png">` +
          `<img src="http://169.254.169.254/latest/meta-data/"></body></html>`,
      )
    },
    '/to-metadata': (_request, response) => {
      response.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' })
      response.end()
    },
  })
  server = await startTestServer({ TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${site.port}` })
})
afterAll(async () => {
  await server.stop()
  await site.stop()
  await forbidden.stop()
})

async function download(url: string): Promise<Uint8Array> {
  return new Uint8Array(await (await fetch(url)).arrayBuffer())
}

describe('screenshot', () => {
  it('photographs a local page at the requested viewport size, stored and linked like any file', async () => {
    const result = await server.call('screenshot', {
      url: `${site.url}/`,
      width: 800,
      height: 600,
      output_path: 'shots/home.png',
    })
    expect(result.status, JSON.stringify(result.body)).toBe(200)
    const file = result.body.files[0]
    expect(file).toMatchObject({ path: 'shots/home.png', mime_type: 'image/png' })
    expect(result.body.openaiFileResponse).toEqual([file.url])
    expect(pngSize(await download(file.url))).toEqual({ width: 800, height: 600 })
    // The page's image on a host that is not open was never requested.
    expect(forbidden.hits).toEqual([])
  })

  it('captures the full page, and JPEG on request', async () => {
    const full = await server.call('screenshot', { url: `${site.url}/`, width: 640, height: 480, full_page: true })
    const size = pngSize(await download(full.body.files[0].url))
    expect(size.width).toBe(640)
    expect(size.height).toBeGreaterThan(2000)
    const jpeg = await server.call('screenshot', { html: '<p>hi</p>', format: 'jpeg', width: 320, height: 200 })
    expect(jpeg.body.files[0].mime_type).toBe('image/jpeg')
    const bytes = await download(jpeg.body.files[0].url)
    expect([...bytes.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff])
  })

  it('renders given HTML without running its scripts or loading anything', async () => {
    const result = await server.call('screenshot', {
      html: `<body style="background:red"><script>document.body.style.background='green'</script><img src="http://127.0.0.1:${forbidden.port}/pixel.png"></body>`,
      width: 200,
      height: 100,
    })
    expect(result.status).toBe(200)
    expect(pngSize(await download(result.body.files[0].url))).toEqual({ width: 200, height: 100 })
    expect(forbidden.hits).toEqual([])
  })

  it('refuses private and metadata targets, also behind a redirect, and bad input', async () => {
    for (const url of [
      `http://127.0.0.1:${forbidden.port}/`,
      'http://169.254.169.254/',
      `${site.url}/to-metadata`,
      'file:///etc/passwd',
    ]) {
      const result = await server.call('screenshot', { url })
      expect([400, 403], `${url}: ${JSON.stringify(result.body)}`).toContain(result.status)
    }
    expect((await server.call('screenshot', {})).body.field).toBe('url')
    expect((await server.call('screenshot', { url: site.url, html: '<p>' })).status).toBe(400)
    expect((await server.call('screenshot', { html: '<p>', width: 99999 })).body.field).toBe('width')
    const deep = await server.call('screenshot', { html: '<span>'.repeat(600) })
    expect(deep.body).toMatchObject({ status: 400, field: 'html' })
    expect(forbidden.hits).toEqual([])
  })
})

describe('screenshot of HTML with a meta refresh', () => {
  async function shot(html: string): Promise<Buffer> {
    const result = await server.call('screenshot', { html, width: 320, height: 120 })
    expect(result.status, JSON.stringify(result.body)).toBe(200)
    return Buffer.from(await download(result.body.files[0].url))
  }

  it.each(['0;url=https://1.1.1.1/', '1;url=https://1.1.1.1/', '0'])(
    'shows the given content, not a blank or replaced page (content="%s")',
    async (refresh) => {
      const content = '<p style="font-size:40px;margin:10px">Hello there</p>'
      const withRefresh = await shot(`<meta http-equiv="refresh" content="${refresh}">${content}`)
      const plain = await shot(content)
      expect(plain.equals(await shot(''))).toBe(false)
      expect(withRefresh.equals(plain)).toBe(true)
    },
  )
})

describe('screenshot and pdf_generation when the browser is killed while calls wait for a page', () => {
  it('answer 200, 503 or 504, never 500, and the next calls work', { timeout: 120_000 }, async () => {
    const browser = createChromiumBrowser({ pages: 2, log: silentLogger })
    const killable = await startTestServer(
      { TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${site.port}` },
      { services: { browser } },
    )
    try {
      const before = new Set(chromiumChildren())
      const warm = await killable.call('pdf_generation', { content: '<p>warm</p>', content_type: 'html' })
      expect(warm.status, JSON.stringify(warm.body)).toBe(200)
      const [pid, ...others] = chromiumChildren().filter((child) => !before.has(child))
      expect(pid).toBeDefined()
      expect(others).toEqual([])
      process.kill(pid as number, 'SIGSTOP')
      const calls = [
        ...[1, 2, 3].map((n) => killable.call('pdf_generation', { content: `<p>${n}</p>`, content_type: 'html' })),
        killable.call('screenshot', { html: '<p>4</p>', width: 200, height: 100 }),
        killable.call('screenshot', { url: `${site.url}/`, width: 200, height: 100 }),
      ]
      // Both pages of the pool are taken (one reused, one being created) and two calls wait for one.
      while (browser.status().active < 2 || browser.status().queued < 2) {
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      process.kill(pid as number, 'SIGKILL')
      const results = await Promise.all(calls)
      for (const result of results) {
        expect([200, 503, 504], JSON.stringify(result.body)).toContain(result.status)
        if (result.status === 503) expect(result.headers.get('retry-after')).toBeTruthy()
      }
      expect(results.filter((result) => result.status === 503).length).toBeGreaterThanOrEqual(2)
      const pdf = await killable.call('pdf_generation', { content: '<p>after</p>', content_type: 'html' })
      expect(pdf.status, JSON.stringify(pdf.body)).toBe(200)
      const image = await killable.call('screenshot', { html: '<p>after</p>', width: 200, height: 100 })
      expect(image.status, JSON.stringify(image.body)).toBe(200)
    } finally {
      await killable.stop()
      await browser.close()
    }
  })
})

describe('URL renders and the page limit (TOOLPORT_BROWSER_PAGES)', () => {
  it('renders one URL at a time with one page: the second waits for a slot before it loads anything', {
    timeout: 60_000,
  }, async () => {
    // Each page's document is held until the test lets it go.
    const held: Array<() => void> = []
    const stalling = await startLocalWeb({
      '/stall': (_request, response) => {
        response.setHeader('content-type', 'text/html')
        held.push(() => response.end('<p>released</p>'))
      },
    })
    const http = createNodeHttpClient({ policy: { allowHosts: [`127.0.0.1:${stalling.port}`] } })
    const browser = createChromiumBrowser({ pages: 1, log: silentLogger, egress: http.resolve })
    const options = { width: 200, height: 100, fullPage: false, format: 'png' as const }
    const target = (n: number) => ({ url: `${stalling.url}/stall?n=${n}`, checkRequest: async () => {} })
    try {
      const first = browser.screenshot(target(1), options)
      const second = browser.renderPage(target(2).url, target(2).checkRequest)
      // A failed assertion below must not leave the two calls rejecting unobserved.
      for (const call of [first, second]) call.catch(() => {})
      // Until the first is loading and the second either waits for the slot or reaches the site too.
      while (stalling.hits.length === 0 || (browser.status().queued === 0 && stalling.hits.length < 2)) {
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      expect(stalling.hits.map((hit) => hit.url)).toEqual(['/stall?n=1'])
      expect(browser.status()).toMatchObject({ active: 1, queued: 1 })
      held.shift()?.()
      expect((await first).byteLength).toBeGreaterThan(0)
      while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 20))
      expect(stalling.hits.map((hit) => hit.url)).toEqual(['/stall?n=1', '/stall?n=2'])
      held.shift()?.()
      expect((await second).html).toContain('released')
    } finally {
      for (const release of held) release()
      await browser.close()
      await stalling.stop()
    }
  })
})

describe('screenshot of a page taller than a JPEG can be', () => {
  it('refuses a full-page JPEG past 65,535 px with 413 naming the limit, and stores no empty file', async () => {
    const html = '<div style="height:100000px;background:#ddd">tall</div>'
    const refused = await server.call('screenshot', {
      html,
      format: 'jpeg',
      full_page: true,
      width: 320,
      height: 200,
      output_path: 'shots/tall.jpg',
    })
    expect(refused.status, JSON.stringify(refused.body)).toBe(413)
    expect(refused.body).toMatchObject({ code: 'size_exceeded', field: 'format' })
    expect(refused.body.detail).toContain('65,535 px')
    expect((await server.call('read_file', { path: 'shots/tall.jpg' })).status).toBe(404)
    const viewport = await server.call('screenshot', { html, format: 'jpeg', width: 320, height: 200 })
    expect(viewport.status).toBe(200)
    expect(viewport.body.files[0].size).toBeGreaterThan(0)
  })
})

describe('web_fetch with render', () => {
  it('reads what a JavaScript site builds, while its scripts reach nothing unchecked', async () => {
    const spa = await startLocalWeb({
      '/': (_request, response) => {
        response.setHeader('content-type', 'text/html')
        response.end(`<!doctype html><html><head><title>App</title></head><body><div id="app">Loading…</div><script>
          document.getElementById('app').innerHTML = '<article><h1>Built by script</h1><p>' + 'This paragraph only exists after the script ran. '.repeat(20) + '</p></article>'
          fetch('http://127.0.0.1:${forbidden.port}/pixel.png').catch(() => {})
          try { new WebSocket('ws://127.0.0.1:${forbidden.port}/') } catch (e) {}
          try { new Worker('data:text/javascript,fetch("http://127.0.0.1:${forbidden.port}/")') } catch (e) {}
        </script></body></html>`)
      },
    })
    const rendering = await startTestServer({ TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${spa.port}` })
    try {
      const plain = await rendering.call('web_fetch', { url: `${spa.url}/` })
      expect(plain.body.content).not.toContain('only exists after the script ran')
      const rendered = await rendering.call('web_fetch', { url: `${spa.url}/`, render: true, format: 'text' })
      expect(rendered.status, JSON.stringify(rendered.body)).toBe(200)
      expect(rendered.body.content).toContain('This paragraph only exists after the script ran.')
      expect(rendered.body.title).toBe('App')
      const refused = await rendering.call('web_fetch', { url: `http://127.0.0.1:${forbidden.port}/`, render: true })
      expect(refused.status).toBe(403)
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(forbidden.hits).toEqual([])
    } finally {
      await rendering.stop()
      await spa.stop()
    }
  })
})
