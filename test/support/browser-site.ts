import type { IncomingMessage, ServerResponse } from 'node:http'
import { type LocalWeb, startLocalWeb } from './local-web'

/**
 * The test site of the browser session suites, on 127.0.0.1: a login form, pages behind its cookie
 * (an account page and a paged table), a form with a select and a file input, a report download, a
 * link that opens a new tab, a redirect to a blocked address, a script that reaches for cloud metadata
 * and another loopback port, dialogs and console output; a page opening forty windows at once, one
 * whose beforeunload handler would keep it, and one 100,000 px tall.
 */
const page = (title: string, body: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`

function send(response: ServerResponse, html: string, status = 200): void {
  response.writeHead(status, { 'content-type': 'text/html; charset=utf-8' })
  response.end(html)
}

function loggedIn(request: IncomingMessage): boolean {
  return /(?:^|;\s*)sid=alice-session(?:;|$)/.test(request.headers.cookie ?? '')
}

export const orderRows = (pageNumber: number) =>
  Array.from({ length: 5 }, (_, index) => {
    const id = (pageNumber - 1) * 5 + index + 1
    return { id, item: `Item ${id}`, total: `${id * 10}.00` }
  })

export async function startBrowserSite(victimPort: number): Promise<LocalWeb> {
  return startLocalWeb({
    '/login': (request, response, body) => {
      if (request.method === 'POST') {
        const form = new URLSearchParams(body)
        if (form.get('user') === 'alice' && form.get('password') === 'wonderland') {
          response.writeHead(302, { location: '/account', 'set-cookie': 'sid=alice-session; Path=/; HttpOnly' })
          response.end()
        } else send(response, page('Login', '<p role="alert">Wrong user name or password.</p>'), 401)
        return
      }
      send(
        response,
        page(
          'Login',
          `<h1>Sign in</h1><form method="post" action="/login">
            <label>User name <input name="user" autocomplete="off"></label>
            <label>Password <input name="password" type="password"></label>
            <button type="submit">Sign in</button></form>`,
        ),
      )
    },
    '/account': (request, response) => {
      if (!loggedIn(request)) return send(response, page('Login required', '<p>Please sign in first.</p>'), 401)
      send(response, page('Account', '<h1>Welcome, alice</h1><a href="/orders?page=1">Your orders</a>'))
    },
    '/orders': (request, response) => {
      if (!loggedIn(request)) return send(response, page('Login required', '<p>Please sign in first.</p>'), 401)
      const number = Number(new URL(request.url ?? '/', 'http://x').searchParams.get('page') ?? '1')
      const rows = orderRows(number)
        .map((row) => `<tr><td>${row.id}</td><td>${row.item}</td><td>${row.total}</td></tr>`)
        .join('')
      const next = number < 3 ? `<a href="/orders?page=${number + 1}">Next page</a>` : ''
      send(
        response,
        page(
          `Orders page ${number}`,
          `<h1>Orders, page ${number} of 3</h1><table><caption>Orders</caption><thead><tr><th>Id</th><th>Item</th><th>Total</th></tr></thead><tbody>${rows}</tbody></table>${next}`,
        ),
      )
    },
    '/form': (_request, response) =>
      send(
        response,
        page(
          'Upload',
          `<form method="post" action="/upload" enctype="multipart/form-data">
            <label>Colour <select name="color"><option value="red">Red</option><option value="green">Green</option><option value="blue">Blue</option></select></label>
            <label>Document <input type="file" name="doc"></label>
            <button type="submit">Send</button></form>`,
        ),
      ),
    '/upload': (request, response, body) => {
      const parsed = new Request('http://x/upload', {
        method: 'POST',
        headers: { 'content-type': request.headers['content-type'] ?? '' },
        body: Buffer.from(body, 'latin1'),
      })
      void parsed.formData().then(
        (form) => {
          const file = form.get('doc')
          const name = file instanceof File ? `${file.name} (${file.size} bytes)` : 'no file'
          send(response, page('Received', `<p>Received ${name}, colour ${String(form.get('color'))}</p>`))
        },
        () => send(response, page('Bad upload', '<p>Could not read the form.</p>'), 400),
      )
    },
    '/report': (_request, response) =>
      send(
        response,
        page('Reports', '<a href="/report.csv">Download the report</a> <a href="/escape.csv">Download another</a>'),
      ),
    '/escape.csv': (_request, response) => {
      response.writeHead(200, {
        'content-type': 'text/csv',
        'content-disposition': 'attachment; filename="../../../../etc/cron.d/evil.csv"',
      })
      response.end('a,b\n')
    },
    '/report.csv': (_request, response) => {
      response.writeHead(200, {
        'content-type': 'text/csv',
        'content-disposition': 'attachment; filename="report.csv"',
      })
      response.end('id,total\n1,10.00\n2,20.00\n')
    },
    '/new-tab': (_request, response) =>
      send(response, page('Links', '<a href="/second" target="_blank">Open the second page</a>')),
    '/second': (_request, response) => send(response, page('Second tab', '<h1>The second page</h1>')),
    '/to-blocked': (_request, response) => {
      response.writeHead(302, { location: `http://127.0.0.1:${victimPort}/redirected` })
      response.end()
    },
    '/sneaky': (_request, response) =>
      send(
        response,
        page(
          'Sneaky',
          `<h1>Nothing to see</h1><script>
            fetch('http://169.254.169.254/latest/meta-data/').catch(() => {})
            fetch('http://127.0.0.1:${victimPort}/from-script').catch(() => {})
            try { new WebSocket('ws://127.0.0.1:${victimPort}/socket') } catch (e) {}
            const image = new Image(); image.src = 'http://127.0.0.1:${victimPort}/pixel.png'
          </script>`,
        ),
      ),
    '/framed': (_request, response) =>
      send(
        response,
        page('Framed', '<h1>Shop</h1><iframe src="/login" title="Sign-in frame" width="600" height="300"></iframe>'),
      ),
    '/popups': (_request, response) =>
      send(
        response,
        page(
          'Popups',
          `<script>
            window.open('http://127.0.0.1:${victimPort}/popup')
            const w = window.open('about:blank')
            try { w.fetch('http://127.0.0.1:${victimPort}/popup-fetch').catch(() => {}) } catch (e) {}
            try { new w.WebSocket('ws://127.0.0.1:${victimPort}/popup-socket') } catch (e) {}
          </script><p>Opened two windows</p>`,
        ),
      ),
    '/dialogs': (_request, response) =>
      send(
        response,
        page(
          'Dialogs',
          `<button onclick="alert('Hello there'); document.querySelector('output').textContent = confirm('Are you sure?') ? 'confirmed' : 'cancelled'">Ask</button><output>none</output>`,
        ),
      ),
    '/console': (_request, response) =>
      send(
        response,
        page('Console', `<script>console.log('hello from the page'); console.error('something broke')</script>`),
      ),
    '/slow-text': (_request, response) =>
      send(
        response,
        page(
          'Slow',
          `<p id="status">Loading…</p><script>setTimeout(() => { document.getElementById('status').textContent = 'Ready now' }, 400)</script>`,
        ),
      ),
    '/burst': (_request, response) =>
      send(
        response,
        page(
          'Burst',
          `<button onclick="for (let i = 0; i < 40; i++) window.open('/second?' + i)">Open forty windows</button>`,
        ),
      ),
    '/leave': (_request, response) =>
      send(
        response,
        page(
          'Stay here',
          `<script>addEventListener('beforeunload', (event) => { event.preventDefault(); event.returnValue = '' })</script>
            <button onclick="this.textContent = 'Touched'">Touch</button>`,
        ),
      ),
    '/tall': (_request, response) =>
      send(response, page('Tall', '<h1>Top</h1><div style="height:100000px;background:#ddd"></div><p>Bottom</p>')),
    '/local-file': (_request, response) =>
      send(
        response,
        page('Local', '<a href="file:///etc/passwd">passwords</a> <a href="chrome://version">version</a>'),
      ),
  })
}

/** The ref of the first snapshot line with this role whose name contains the text. */
export function refFor(snapshot: string, role: string, name: string): string {
  const line = snapshot.split('\n').find((candidate) => candidate.includes(`- ${role} `) && candidate.includes(name))
  const ref = line && /\[ref=(e\d+)\]/.exec(line)?.[1]
  if (!ref) throw new Error(`no ${role} "${name}" with a ref in:\n${snapshot}`)
  return ref
}
