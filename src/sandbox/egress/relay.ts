import type { Socket } from 'node:net'
import type { EgressLedger } from './ledger'

/**
 * Relays bytes both ways between the sandbox's connection and the host it asked for, counting every
 * byte in the call's ledger: when a byte limit is reached the last chunk is cut to what is left and
 * both sides are closed, and a connection open past the time limit is cut too. Half-closes pass
 * through (a client may finish sending and still read), and backpressure holds: a slow reader pauses
 * the sender instead of filling memory.
 */
export function relay(
  client: Socket,
  upstream: Socket,
  options: { host: string; ledger: EgressLedger; maxSeconds: number; first?: Buffer },
): Promise<void> {
  const { host, ledger } = options
  return new Promise((resolve) => {
    let done = false
    const finish = () => {
      if (done) return
      done = true
      clearTimeout(timer)
      client.destroy()
      upstream.destroy()
      resolve()
    }
    const timer = setTimeout(() => {
      ledger.timedOut(host)
      finish()
    }, options.maxSeconds * 1000)
    timer.unref()

    const pipe = (from: Socket, to: Socket, take: (count: number) => number) => {
      from.on('data', (chunk: Buffer) => {
        const granted = take(chunk.byteLength)
        if (granted < chunk.byteLength) {
          // What the limit still allows goes out, then both sides close.
          if (granted > 0) to.write(chunk.subarray(0, granted))
          to.end(finish)
          from.destroy()
          return
        }
        if (!to.write(chunk)) from.pause()
      })
      to.on('drain', () => from.resume())
      from.on('end', () => to.end())
    }
    pipe(client, upstream, (count) => ledger.takeOut(host, count))
    pipe(upstream, client, (count) => ledger.takeIn(host, count))
    client.on('error', finish)
    upstream.on('error', finish)
    // Each side closes once both of its directions ended; an error on either ends both at once.
    let closed = 0
    const onClose = () => {
      closed++
      if (closed === 2) finish()
    }
    client.on('close', onClose)
    upstream.on('close', onClose)
    if (options.first && options.first.byteLength > 0) client.emit('data', options.first)
    client.resume()
    upstream.resume()
  })
}
