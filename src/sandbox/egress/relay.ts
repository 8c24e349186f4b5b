import { connect, type Socket } from 'node:net'
import type { EgressLedger } from './ledger'

/**
 * Relays bytes both ways between the sandbox's connection and the host it asked for, counting every
 * byte in the call's ledger: when a byte limit is reached the last chunk is cut to what is left and
 * both sides are closed, and a connection open past the time limit is cut too. Half-closes pass
 * through (a client may finish sending and still read), and backpressure holds: a slow reader pauses
 * the sender instead of filling memory.
 *
 * Downloads are the hot path: the upstream socket reads into one reusable buffer per connection
 * (net's `onread`) and reading pauses until each chunk is handed to the kernel, so no chunk is
 * allocated or copied in JavaScript (a quarter to a half less CPU per byte than 'data' events, which
 * allocate a 64 KiB buffer per read).
 */
export interface Upstream {
  socket: Socket
  /** Where received bytes go; each view is valid until the socket is resumed. */
  receive(handler: (bytes: Buffer) => void): void
}

const readBufferBytes = 256 * 1024

/** Connects to the checked address itself (never to a name), paused until relay() takes over. */
export function connectUpstream(address: string, port: number, family: 4 | 6, timeoutMs: number): Promise<Upstream> {
  let handler: ((bytes: Buffer) => void) | undefined
  const early: Buffer[] = []
  return new Promise((resolve, reject) => {
    const socket = connect({
      host: address,
      port,
      family,
      allowHalfOpen: true,
      noDelay: true,
      onread: {
        buffer: Buffer.allocUnsafe(readBufferBytes),
        callback(count, buffer) {
          const bytes = Buffer.from(buffer.buffer, buffer.byteOffset, count)
          // Before relay() attaches (the socket is paused then, so this is a formality): keep a copy.
          if (handler) handler(bytes)
          else early.push(Buffer.from(bytes))
          return true
        },
      },
    })
    socket.setTimeout(timeoutMs, () => socket.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })))
    socket.once('error', reject)
    socket.once('connect', () => {
      socket.pause()
      socket.setTimeout(0)
      socket.off('error', reject)
      resolve({
        socket,
        receive(next) {
          handler = next
          for (const bytes of early.splice(0)) next(bytes)
        },
      })
    })
  })
}

export function relay(
  client: Socket,
  upstream: Upstream,
  options: { host: string; ledger: EgressLedger; maxSeconds: number; first?: Buffer },
): Promise<void> {
  const { host, ledger } = options
  const remote = upstream.socket
  return new Promise((resolve) => {
    let done = false
    const finish = () => {
      if (done) return
      done = true
      clearTimeout(timer)
      client.destroy()
      remote.destroy()
      resolve()
    }
    const timer = setTimeout(() => {
      ledger.timedOut(host)
      finish()
    }, options.maxSeconds * 1000)
    timer.unref()
    // What a limit still allows goes out, then both sides close.
    const cut = (to: Socket, from: Socket, bytes: Buffer) => {
      to.end(bytes, finish)
      from.destroy()
    }

    upstream.receive((bytes) => {
      const granted = ledger.takeIn(host, bytes.byteLength)
      if (granted < bytes.byteLength) return cut(client, remote, bytes.subarray(0, granted))
      // The view lives in the socket's read buffer: no more reads until the kernel has it.
      remote.pause()
      client.write(bytes, () => {
        if (!done) remote.resume()
      })
    })
    client.on('data', (chunk: Buffer) => {
      const granted = ledger.takeOut(host, chunk.byteLength)
      if (granted < chunk.byteLength) return cut(remote, client, chunk.subarray(0, granted))
      if (!remote.write(chunk)) client.pause()
    })
    remote.on('drain', () => client.resume())
    client.on('end', () => remote.end())
    remote.on('end', () => client.end())
    client.on('error', finish)
    remote.on('error', finish)
    // Each side closes once both of its directions ended; an error on either ends both at once.
    let closed = 0
    const onClose = () => {
      closed++
      if (closed === 2) finish()
    }
    client.on('close', onClose)
    remote.on('close', onClose)
    if (options.first && options.first.byteLength > 0) client.emit('data', options.first)
    client.resume()
    remote.resume()
  })
}
