import type { Socket } from 'node:net'

/**
 * Reads the handshake of a proxy connection (an HTTP request head, a SOCKS5 greeting) from a socket:
 * exact byte counts or up to a delimiter, never more than `maxBytes` in all, within `timeoutMs`. Once
 * the handshake is done, release() pauses the socket and hands back what was read past it, so the
 * relay that takes over loses no byte.
 */
export interface HandshakeReader {
  take(count: number): Promise<Buffer>
  /** Everything up to and including delimiter. */
  until(delimiter: string): Promise<Buffer>
  release(): Buffer
}

export class HandshakeError extends Error {
  override name = 'HandshakeError'
}

export function handshakeReader(socket: Socket, options: { maxBytes: number; timeoutMs: number }): HandshakeReader {
  let buffer: Buffer = Buffer.alloc(0)
  let consumed = 0
  let wake: (() => void) | undefined
  let failure: HandshakeError | undefined
  const fail = (message: string) => {
    failure ??= new HandshakeError(message)
    wake?.()
  }
  const onData = (chunk: Buffer) => {
    buffer = buffer.byteLength === 0 ? chunk : Buffer.concat([buffer, chunk])
    if (consumed + buffer.byteLength > options.maxBytes) fail('the handshake is too long')
    wake?.()
  }
  const onEnd = () => fail('the client closed the connection during the handshake')
  const timer = setTimeout(() => fail('the handshake took too long'), options.timeoutMs)
  socket.on('data', onData)
  socket.once('end', onEnd)
  socket.once('close', onEnd)

  async function fill(ready: () => boolean): Promise<void> {
    while (!ready()) {
      if (failure) throw failure
      await new Promise<void>((resolve) => {
        wake = resolve
      })
      wake = undefined
    }
  }
  function cut(count: number): Buffer {
    const taken = buffer.subarray(0, count)
    buffer = buffer.subarray(count)
    consumed += count
    return taken
  }

  return {
    async take(count) {
      await fill(() => buffer.byteLength >= count)
      return cut(count)
    },
    async until(delimiter) {
      let index = -1
      await fill(() => {
        index = buffer.indexOf(delimiter)
        return index !== -1
      })
      return cut(index + delimiter.length)
    },
    release() {
      clearTimeout(timer)
      socket.pause()
      socket.off('data', onData)
      socket.off('end', onEnd)
      socket.off('close', onEnd)
      return buffer
    },
  }
}
