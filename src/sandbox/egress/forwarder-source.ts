/**
 * The forwarder script (CommonJS, for the service's own Node binary inside the sandbox; see
 * forwarder.ts). Kept as text: it is written to a file the sandbox sees, and must not depend on how
 * toolport itself was built or bundled.
 *
 * argv: <proxy socket> -- <program> <args…>. It listens on 127.0.0.1 (an ephemeral port of the
 * sandbox's own loopback), then runs the program with the proxy variables pointing there, relays
 * every connection to the socket, and exits as the program did (the same code, or the same signal).
 */
import { proxyVariables } from './proxy-variables'

export const forwarderSource = String.raw`'use strict'
// toolport egress forwarder: relays the sandbox's loopback to toolport's proxy socket.
const net = require('node:net')
const { spawn } = require('node:child_process')
const [socketPath, separator, file, ...args] = process.argv.slice(2)
if (!socketPath || separator !== '--' || !file) {
  process.stderr.write('toolport: the egress forwarder was started without a command\n')
  process.exit(125)
}
let child
// Downloads read into one reusable buffer per connection and wait until the kernel took each chunk:
// no allocation or copy per chunk in JavaScript (see sandbox/egress/relay.ts).
const readBufferBytes = 256 * 1024
const server = net.createServer({ allowHalfOpen: true, noDelay: true }, (client) => {
  const upstream = net.connect({
    path: socketPath,
    allowHalfOpen: true,
    onread: {
      buffer: Buffer.allocUnsafe(readBufferBytes),
      callback(count, buffer) {
        upstream.pause()
        client.write(buffer.subarray(0, count), () => upstream.resume())
      },
    },
  })
  const cut = () => {
    client.destroy()
    upstream.destroy()
  }
  client.on('error', cut)
  upstream.on('error', cut)
  upstream.on('end', () => client.end())
  client.pipe(upstream)
})
server.on('error', (error) => {
  process.stderr.write('toolport: the egress forwarder could not listen: ' + error.message + '\n')
  process.exit(125)
})
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
  process.on(signal, () => {
    if (child) child.kill(signal)
  })
}
server.listen(0, '127.0.0.1', () => {
  const port = server.address().port
  // The variables of proxy-variables.ts, their origin filled in here.
  const variables = ${JSON.stringify(proxyVariables('@origin'))}
  const env = Object.assign({}, process.env)
  for (const [name, value] of Object.entries(variables)) env[name] = value.replace('@origin', '127.0.0.1:' + port)
  child = spawn(file, args, { stdio: 'inherit', env })
  child.on('error', (error) => {
    process.stderr.write('toolport: cannot run ' + file + ': ' + error.message + '\n')
    process.exit(127)
  })
  child.on('exit', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal)
      process.kill(process.pid, signal)
      // A signal Node ignores (SIGPIPE) ends up here: report it the way a shell does.
      const number = require('node:os').constants.signals[signal] || 0
      process.exit(128 + number)
    }
    process.exit(code === null ? 1 : code)
  })
})
`
