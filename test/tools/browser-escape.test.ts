import { createSocket, type Socket } from 'node:dgram'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type LocalWeb, startLocalWeb } from '../support/local-web'
import { startTestServer, type TestServer } from '../support/server'

/**
 * Attacks from rendered pages (issue #22, item 1): a page on an allowed loopback host tries every way
 * a browser has to reach another loopback port — popups and new tabs, links and forms with a target,
 * workers, service workers, frames, WebSockets (also from a popup's window), preconnects, WebRTC and
 * WebTransport — through web_fetch (render), screenshot and pdf_generation. The victim records every
 * request, WebSocket handshake and bare TCP connection, and a UDP socket every datagram.
 */
let victim: LocalWeb
let site: LocalWeb
let datagrams: Socket
let udpPort = 0
const udpHits: number[] = []
let server: TestServer

const html = (body: string) => `<!doctype html><html><head><title>attack</title></head><body>${body}</body></html>`
// A slow image holds the page's load event, so what the scripts start has time to leave.
const hold = (site: () => LocalWeb) => `<img src="${site().url}/slow">`

function attacks(): Record<string, string> {
  const v = victim.url
  const ws = `ws://127.0.0.1:${victim.port}`
  return {
    '/window-open': `<script>window.open('${v}/window-open')</script>`,
    '/popup-window': `<script>
      const w = window.open('about:blank')
      try { w.fetch('${v}/popup-fetch').catch(() => {}) } catch (e) {}
      try { new w.WebSocket('${ws}/popup-websocket') } catch (e) {}
      try { w.document.write('<img src="${v}/popup-image">') } catch (e) {}
    </script>`,
    '/link-blank': `<a id="a" target="_blank" href="${v}/link-blank">x</a><script>document.getElementById('a').click()</script>`,
    '/link-noopener': `<a id="a" target="_blank" rel="noopener noreferrer" href="${v}/link-noopener">x</a><script>document.getElementById('a').click()</script>`,
    '/form-blank': `<form id="f" target="_blank" method="post" action="${v}/form-blank"><input name="q" value="1"></form><script>document.getElementById('f').submit()</script>`,
    '/worker': `<script>new Worker('/worker.js')</script>`,
    // A fresh frame's globals are a second copy of every constructor a page script could be denied.
    '/frame-globals': `<script>
      const f = document.body.appendChild(document.createElement('iframe'))
      try { new f.contentWindow.WebSocket('${ws}/frame-websocket') } catch (e) {}
      try { new f.contentWindow.Worker('/worker.js') } catch (e) {}
    </script>`,
    '/service-worker': `<script>navigator.serviceWorker && navigator.serviceWorker.register('/sw.js').catch(() => {})</script>`,
    '/frames': `<iframe src="${v}/frame"></iframe><iframe srcdoc="<script>fetch('${v}/srcdoc-fetch').catch(() => {})</script>"></iframe>`,
    '/channels': `<link rel="preconnect" href="${v}"><script>
      try { new WebSocket('${ws}/websocket') } catch (e) {}
      try { new WebTransport('https://127.0.0.1:${udpPort}/').ready.catch(() => {}) } catch (e) {}
      (async () => {
        const pc = new RTCPeerConnection({ iceServers: [{ urls: 'stun:127.0.0.1:${udpPort}' }, { urls: 'turn:127.0.0.1:${victim.port}?transport=tcp', username: 'u', credential: 'p' }] })
        pc.createDataChannel('x')
        await pc.setLocalDescription(await pc.createOffer())
        const other = new RTCPeerConnection(); other.createDataChannel('y')
        const offer = await other.createOffer()
        const sdp = offer.sdp + 'a=candidate:1 1 udp 2122260223 127.0.0.1 ${udpPort} typ host\\r\\na=candidate:2 1 tcp 1518280447 127.0.0.1 ${victim.port} typ host tcptype passive\\r\\n'
        await pc.setRemoteDescription({ type: 'answer', sdp: sdp.replace('a=setup:actpass', 'a=setup:active') }).catch(() => {})
      })().catch(() => {})
    </script>`,
  }
}

beforeAll(async () => {
  victim = await startLocalWeb({})
  datagrams = createSocket('udp4')
  datagrams.on('message', (message) => udpHits.push(message.length))
  await new Promise<void>((resolve) => datagrams.bind(0, '127.0.0.1', resolve))
  udpPort = datagrams.address().port
  const routes: Parameters<typeof startLocalWeb>[0] = {
    '/slow': (_request, response) => {
      setTimeout(() => response.end(), 1500)
    },
    '/worker.js': (_request, response) => {
      response.setHeader('content-type', 'text/javascript')
      response.end(
        `fetch('${victim.url}/worker-fetch').catch(() => {}); try { new WebSocket('ws://127.0.0.1:${victim.port}/worker-websocket') } catch (e) {}`,
      )
    },
    '/sw.js': (_request, response) => {
      response.setHeader('content-type', 'text/javascript')
      response.end(`fetch('${victim.url}/service-worker-fetch').catch(() => {})`)
    },
  }
  for (const [path, body] of Object.entries(attacks())) {
    routes[path] = (_request, response) => {
      response.setHeader('content-type', 'text/html')
      response.end(html(body + hold(() => site)))
    }
  }
  site = await startLocalWeb(routes)
  server = await startTestServer({ TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${site.port}` })
})

afterAll(async () => {
  await server?.stop()
  await site?.stop()
  await victim?.stop()
  datagrams?.close()
})

/** What reached the victim since the test began. */
let mark = { hits: 0, connections: 0, datagrams: 0 }
beforeEach(() => {
  mark = { hits: victim.hits.length, connections: victim.connections, datagrams: udpHits.length }
})
function reached(): string[] {
  const connections = victim.connections - mark.connections
  const udp = udpHits.length - mark.datagrams
  return [
    ...victim.hits.slice(mark.hits).map((hit) => `${hit.method} ${hit.url}`),
    ...(connections > 0 ? [`${connections} TCP connection(s)`] : []),
    ...(udp > 0 ? [`${udp} UDP datagram(s)`] : []),
  ]
}

// Whatever a call started may still be on its way when the call answers.
const settle = () => new Promise((resolve) => setTimeout(resolve, 1500))

describe('a rendered page cannot reach a loopback port that is not open', () => {
  const paths = () => Object.keys(attacks())

  it.each([
    'window-open',
    'popup-window',
    'link-blank',
    'link-noopener',
    'form-blank',
    'worker',
    'frame-globals',
    'service-worker',
    'frames',
    'channels',
  ])('web_fetch render: %s', { timeout: 60_000 }, async (name) => {
    expect(paths()).toContain(`/${name}`)
    const result = await server.call('web_fetch', { url: `${site.url}/${name}`, render: true })
    expect(result.status, JSON.stringify(result.body)).toBe(200)
    await settle()
    expect(reached()).toEqual([])
  })

  it.each([
    'window-open',
    'popup-window',
    'link-blank',
    'form-blank',
    'worker',
    'service-worker',
    'frames',
    'channels',
  ])('screenshot: %s', { timeout: 60_000 }, async (name) => {
    const result = await server.call('screenshot', { url: `${site.url}/${name}`, width: 320, height: 200 })
    expect(result.status, JSON.stringify(result.body)).toBe(200)
    await settle()
    expect(reached()).toEqual([])
  })

  it('pdf_generation: HTML with frames, links, forms, preconnects and images to the victim', async () => {
    const v = victim.url
    const result = await server.call('pdf_generation', {
      content_type: 'html',
      content: html(
        `<link rel="preconnect" href="${v}"><link rel="prefetch" href="${v}/prefetch"><img src="${v}/image">` +
          `<iframe src="${v}/frame"></iframe><iframe srcdoc="<img src='${v}/srcdoc-image'>"></iframe>` +
          `<object data="${v}/object"></object><a target="_blank" href="${v}/link">link</a>` +
          `<form target="_blank" action="${v}/form"><input autofocus></form><style>body{background:url(${v}/css)}</style>`,
      ),
    })
    expect(result.status, JSON.stringify(result.body)).toBe(200)
    await settle()
    expect(reached()).toEqual([])
  })
})
