/**
 * Programs the egress suites run inside the sandbox, as shell command lines: the same three clients
 * the acceptance names (curl, Python's urllib, Node) both through the proxy the environment names and
 * around it. Each prints one line: the body it got, or "ERR <why>".
 */
export const caFile = 'ca.pem'

/** Node's https through HTTPS_PROXY by hand (Node 20's own clients ignore proxy variables). */
export const nodeProxyClient = `'use strict'
const http = require('node:http')
const https = require('node:https')
const tls = require('node:tls')
const fs = require('node:fs')
const target = new URL(process.argv[2])
const proxy = new URL(process.env[target.protocol === 'https:' ? 'HTTPS_PROXY' : 'HTTP_PROXY'])
const fail = (error) => { console.log('ERR', error.code || error.message); process.exitCode = 1 }
const print = (response) => { let body = ''; response.on('data', (c) => { body += c }); response.on('end', () => console.log(response.statusCode, body.trim())) }
if (target.protocol === 'http:') {
  http.get({ host: proxy.hostname, port: proxy.port, path: target.href, headers: { host: target.host } }, print).on('error', fail)
} else {
  const connect = http.request({ host: proxy.hostname, port: proxy.port, method: 'CONNECT', path: target.host })
  connect.on('connect', (response, socket) => {
    if (response.statusCode !== 200) return fail(new Error('CONNECT ' + response.statusCode))
    const secure = tls.connect({ socket, servername: target.hostname, ca: fs.readFileSync('${caFile}') })
    https.get(target, { createConnection: () => secure }, print).on('error', fail)
  })
  connect.on('error', fail)
  connect.end()
}
`

export const curl = (url: string, extra = '') =>
  `curl -sS --max-time 15 --cacert ${caFile} ${extra} ${url} 2>&1 || echo "ERR curl exit $?"`

export const python = (url: string, proxies: 'environment' | 'none' = 'environment') =>
  `python3 -c "
import ssl, sys, urllib.request
handlers = [urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile='${caFile}'))]
if '${proxies}' == 'none': handlers.append(urllib.request.ProxyHandler({}))
try: print(urllib.request.build_opener(*handlers).open(sys.argv[1], timeout=15).read().decode().strip())
except Exception as error: print('ERR', error)
" ${url}`

export const nodeViaProxy = (url: string) => `node proxy-client.cjs ${url}`

/** Node's fetch: it ignores proxy variables, so this is a direct connection. */
export const nodeFetch = (url: string) =>
  `node -e "fetch(process.argv[1]).then(r => r.text()).then(t => console.log(t.trim()), e => console.log('ERR', e.cause?.code ?? e.message))" ${url}`

/** Malformed and hostile handshakes sent to the proxy port; prints the first answer line (or bytes) of each. */
export const proxyAbuseClient = `'use strict'
const net = require('node:net')
const port = new URL(process.env.HTTP_PROXY).port
const send = (bytes) => new Promise((resolve) => {
  const socket = net.connect(port, '127.0.0.1')
  const chunks = []
  socket.on('data', (chunk) => chunks.push(chunk))
  socket.on('error', () => {})
  socket.on('close', () => {
    const answer = Buffer.concat(chunks)
    resolve(answer.length === 0 ? '(closed)' : answer[0] === 5 ? 'socks ' + [...answer.subarray(0, 4)].join(',') : answer.toString('latin1').split('\\r\\n')[0])
  })
  socket.end(bytes)
})
const cases = [
  Buffer.from('GARBAGE\\r\\n\\r\\n'),
  Buffer.from('GET /relative HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n'),
  Buffer.from('CONNECT fixture.test\\r\\n\\r\\n'),
  Buffer.from('GET http://fixture.test/ HTTP/1.1\\r\\nX: a\\nB: c\\r\\n\\r\\n'),
  Buffer.alloc(100000, 'A'),
  Buffer.from([5, 1, 2]),
  Buffer.from([5, 1, 0, 5, 2, 0, 1, 127, 0, 0, 1, 0, 80]),
  Buffer.from([5, 1, 0, 5, 1, 0, 9, 1, 2, 3]),
]
;(async () => { for (const bytes of cases) console.log(await send(bytes)) })()
`
