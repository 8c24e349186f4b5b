import { chmod, chown, rm } from 'node:fs/promises'
import { createServer, type Socket } from 'node:net'
import { parseProxyRequest, proxyAnswer, tunnelOpen } from './http-head'
import { createEgressLedger, type EgressLedger, type EgressReport } from './ledger'
import { HandshakeError, type HandshakeReader, handshakeReader } from './reader'
import { connectUpstream, relay, type Upstream } from './relay'
import type { EgressLimits } from './settings'
import { readSocksRequest, socksReplies, socksReply } from './socks'
import { checkTarget, type TargetRules } from './target'

/**
 * One call's egress proxy: a Unix socket that only this call's sandbox can reach (it is bound into
 * the sandbox, and the forwarder there relays its loopback port to it). Each connection speaks HTTP
 * (CONNECT, or a plain request in absolute form) or SOCKS5; every target is checked (target.ts),
 * counted and limited (ledger.ts), and close() reports what the call contacted.
 */
export interface EgressSessionOptions {
  socketPath: string
  /** Owner of the socket: the uid the sandbox runs as (it needs write permission to connect). */
  owner: { uid: number; gid: number } | undefined
  rules: TargetRules
  limits: EgressLimits
  /** One line for the command's stderr (refusals and cuts). */
  note(line: string): void
}

export interface EgressSession {
  readonly socketPath: string
  /** Stops accepting, cuts every open connection, and reports. */
  close(): Promise<EgressReport>
}

const handshake = { maxBytes: 64 * 1024, timeoutMs: 30_000 }
const connectTimeoutMs = 15_000
// Client connections (handshakes and relays) open at once, on top of the call's connection limit.
const openSlack = 64

export async function openEgressSession(options: EgressSessionOptions): Promise<EgressSession> {
  const ledger = createEgressLedger(options.limits, options.note)
  const open = new Set<Socket>()
  const server = createServer({ allowHalfOpen: true, pauseOnConnect: true }, (socket) => {
    if (open.size >= options.limits.connections + openSlack) {
      socket.destroy()
      return
    }
    open.add(socket)
    socket.once('close', () => open.delete(socket))
    socket.on('error', () => socket.destroy())
    void serve(socket, ledger, options).catch(() => socket.destroy())
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.socketPath, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const { owner } = options
  try {
    await Promise.all([
      chmod(options.socketPath, 0o600),
      owner ? chown(options.socketPath, owner.uid, owner.gid) : undefined,
    ])
  } catch (error) {
    server.close()
    await rm(options.socketPath, { force: true })
    throw error
  }
  return {
    socketPath: options.socketPath,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      for (const socket of open) socket.destroy()
      await closed
      await rm(options.socketPath, { force: true })
      return ledger.report()
    },
  }
}

async function serve(client: Socket, ledger: EgressLedger, options: EgressSessionOptions): Promise<void> {
  const reader = handshakeReader(client, handshake)
  client.resume()
  try {
    const [first] = await reader.take(1)
    if (first === 0x05) await serveSocks(client, reader, ledger, options)
    else await serveHttp(client, Buffer.from([first ?? 0]), reader, ledger, options)
  } catch (error) {
    if (!(error instanceof HandshakeError)) throw error
    client.destroy()
  }
}

async function serveHttp(
  client: Socket,
  first: Buffer,
  reader: HandshakeReader,
  ledger: EgressLedger,
  options: EgressSessionOptions,
): Promise<void> {
  const request = parseProxyRequest(Buffer.concat([first, await reader.until('\r\n\r\n')]))
  if (request.kind === 'invalid') {
    client.end(proxyAnswer(400, 'Bad Request', `toolport: ${request.message}\n`))
    return
  }
  const opened = await openUpstream(request.host, request.port, ledger, options)
  if ('refusal' in opened) {
    const [status, text] = opened.failed ? [502, 'Bad Gateway'] : [403, 'Forbidden']
    client.end(
      proxyAnswer(status, text, `${opened.refusal}\n`, { 'X-Toolport-Egress': opened.failed ? 'failed' : 'refused' }),
    )
    return
  }
  const rest = reader.release()
  if (request.kind === 'connect') {
    client.write(tunnelOpen)
  } else {
    const granted = ledger.takeOut(opened.host, request.head.byteLength)
    if (granted < request.head.byteLength) {
      opened.upstream.socket.destroy()
      client.destroy()
      return
    }
    opened.upstream.socket.write(request.head)
  }
  await relay(client, opened.upstream, {
    host: opened.host,
    ledger,
    maxSeconds: options.limits.connectionSeconds,
    first: rest,
  })
}

async function serveSocks(
  client: Socket,
  reader: HandshakeReader,
  ledger: EgressLedger,
  options: EgressSessionOptions,
): Promise<void> {
  const request = await readSocksRequest(reader, (bytes) => client.write(bytes))
  if ('reply' in request) {
    if (request.reply === null) client.end()
    else client.end(socksReply(request.reply))
    return
  }
  const opened = await openUpstream(request.host, request.port, ledger, options)
  if ('refusal' in opened) {
    client.end(socksReply(opened.failed ? socksReplies.hostUnreachable : socksReplies.notAllowed))
    return
  }
  const rest = reader.release()
  client.write(socksReply(socksReplies.succeeded))
  await relay(client, opened.upstream, {
    host: opened.host,
    ledger,
    maxSeconds: options.limits.connectionSeconds,
    first: rest,
  })
}

type Opened = { host: string; upstream: Upstream } | { refusal: string; failed: boolean }

/** Checks the target, takes a connection from the call's budget, and connects to the checked address. */
async function openUpstream(
  rawHost: string,
  port: number,
  ledger: EgressLedger,
  options: EgressSessionOptions,
): Promise<Opened> {
  const verdict = await checkTarget(rawHost, port, options.rules)
  if (!verdict.allowed) {
    ledger.refused(verdict.host, verdict.reason)
    return { refusal: `toolport: egress to ${verdict.host} refused: ${verdict.reason}`, failed: false }
  }
  const limit = ledger.admit(verdict.host)
  if (limit) {
    ledger.refused(verdict.host, limit)
    return { refusal: `toolport: egress to ${verdict.host} refused: ${limit}`, failed: false }
  }
  try {
    const upstream = await connectUpstream(verdict.address, port, verdict.family, connectTimeoutMs)
    return { host: verdict.host, upstream }
  } catch (error) {
    const reason = connectionProblem(error)
    ledger.failed(verdict.host, reason)
    return { refusal: `toolport: egress to ${verdict.host} failed: ${reason}`, failed: true }
  }
}

function connectionProblem(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'ECONNREFUSED') return 'the connection was refused'
  if (code === 'ETIMEDOUT') return 'the connection timed out'
  if (code === 'ENETUNREACH' || code === 'EHOSTUNREACH') return 'the host is unreachable'
  return 'the connection failed'
}
