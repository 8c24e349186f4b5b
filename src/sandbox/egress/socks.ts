import type { HandshakeReader } from './reader'

/**
 * SOCKS5 (RFC 1928) as the egress proxy speaks it: no authentication, CONNECT only, with an IPv4,
 * IPv6 or domain-name target (`socks5h://`, where the proxy resolves the name: the sandbox has no
 * DNS of its own). The greeting is answered here; the request is returned for the same checks as an
 * HTTP CONNECT, and socksReply() answers it.
 */
/** reply null: the greeting failed, and the answer to it is all the client gets. */
export type SocksRequest = { host: string; port: number } | { reply: SocksReplyCode | null; message: string }

/** RFC 1928 reply codes used here. */
export const socksReplies = {
  succeeded: 0x00,
  failure: 0x01,
  notAllowed: 0x02,
  hostUnreachable: 0x04,
  connectionRefused: 0x05,
  commandNotSupported: 0x07,
  addressTypeNotSupported: 0x08,
} as const

export type SocksReplyCode = (typeof socksReplies)[keyof typeof socksReplies]

const noAuthentication = 0x00
const noAcceptableMethod = 0xff
const connectCommand = 0x01

/** Reads the greeting (its version byte already taken) and the request; writes the method choice. */
export async function readSocksRequest(reader: HandshakeReader, write: (bytes: Buffer) => void): Promise<SocksRequest> {
  const [methodCount = 0] = await reader.take(1)
  const methods = await reader.take(methodCount)
  if (!methods.includes(noAuthentication)) {
    write(Buffer.from([0x05, noAcceptableMethod]))
    return { reply: null, message: 'the client offers no method without authentication' }
  }
  write(Buffer.from([0x05, noAuthentication]))
  const [version, command, , addressType] = await reader.take(4)
  if (version !== 0x05) return { reply: socksReplies.failure, message: 'not a SOCKS5 request' }
  let host: string
  if (addressType === 0x01) {
    host = [...(await reader.take(4))].join('.')
  } else if (addressType === 0x04) {
    const bytes = await reader.take(16)
    const groups: string[] = []
    for (let index = 0; index < 16; index += 2) groups.push(bytes.readUInt16BE(index).toString(16))
    host = groups.join(':')
  } else if (addressType === 0x03) {
    const [length = 0] = await reader.take(1)
    host = (await reader.take(length)).toString('latin1')
  } else {
    return { reply: socksReplies.addressTypeNotSupported, message: 'unknown address type' }
  }
  const port = (await reader.take(2)).readUInt16BE(0)
  if (command !== connectCommand)
    return { reply: socksReplies.commandNotSupported, message: 'only CONNECT is supported' }
  return { host, port }
}

/** The reply to a request; the bound address is left empty (0.0.0.0:0), which clients ignore. */
export function socksReply(code: SocksReplyCode): Buffer {
  return Buffer.from([0x05, code, 0x00, 0x01, 0, 0, 0, 0, 0, 0])
}
