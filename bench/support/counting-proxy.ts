import { createServer, request as forward, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * An HTTP proxy in front of a storage endpoint (s3rver) that calls `count` for every request it
 * forwards: how the storage benchmarks see what toolport asks of its bucket.
 */
export async function startCountingProxy(
  endpoint: string,
  count: (incoming: IncomingMessage) => void,
): Promise<{ endpoint: string; close(): void }> {
  const upstream = new URL(endpoint)
  const proxy = createServer((incoming, outgoing) => {
    count(incoming)
    const relay = forward(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(outgoing)
      },
    )
    relay.on('error', () => outgoing.destroy())
    incoming.pipe(relay)
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  return { endpoint: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, close: () => proxy.close() }
}
