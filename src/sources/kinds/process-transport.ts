import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import type { SourceProcess } from '../types'

/** Largest message (or MCP response body) a source may send: past it, the connection is dropped. */
export const maxMessageBytes = 16 * 1024 * 1024

/**
 * An MCP transport over a sandboxed process's stdin and stdout: one JSON-RPC message per line. A line
 * that is not JSON-RPC, or output past the size cap, ends the connection: a server that breaks the
 * protocol cannot be trusted with the next call either. A JSON-RPC worker (worker-process.ts) speaks
 * the same framing, so it uses this transport too (`what` names the program in messages).
 */
export class ProcessTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  private buffer = ''
  private closed = false
  private stderrTail = ''
  /** Why the connection ended, when the server broke it. */
  private failure: string | undefined

  constructor(
    private readonly process: SourceProcess,
    private readonly parse: (line: string) => JSONRPCMessage,
    private readonly what = 'the MCP server',
  ) {}

  async start(): Promise<void> {
    const decoder = new TextDecoder()
    this.process.onStdout((chunk) => {
      if (this.closed) return
      // Whole lines are cut from the chunk as it comes, so a long message is scanned once, not once a chunk.
      let text = decoder.decode(chunk, { stream: true })
      let newline = text.indexOf('\n')
      while (newline !== -1) {
        const line = (this.buffer + text.slice(0, newline)).replace(/\r$/, '')
        this.buffer = ''
        text = text.slice(newline + 1)
        if (line.trim() !== '') {
          let message: JSONRPCMessage
          try {
            message = this.parse(line)
          } catch {
            return this.fail(new Error(`${this.what} wrote a line that is not JSON-RPC: ${line.slice(0, 200)}`))
          }
          this.deliver(message)
        }
        newline = text.indexOf('\n')
      }
      this.buffer += text
      if (this.buffer.length > maxMessageBytes) {
        return this.fail(new Error(`${this.what} sent a message larger than ${maxMessageBytes} bytes`))
      }
    })
    this.process.onStderr((text) => {
      this.stderrTail = (this.stderrTail + text).slice(-2_000)
    })
    void this.process.exited.then(({ code }) => {
      if (!this.closed) this.fail(new Error(`${this.what} exited (code ${code ?? 'killed'})`))
    })
  }

  /**
   * A response waits one microtask: the SDK dispatches a notification a microtask after it arrives but
   * a response at once, so the last progress notification of a call, read in the same chunk as its
   * result, would find the call's progress handler already gone and be dropped.
   */
  private deliver(message: JSONRPCMessage): void {
    if ('method' in message) this.onmessage?.(message)
    else queueMicrotask(() => this.onmessage?.(message))
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) throw new Error(`the connection to ${this.what} is closed`)
    this.process.write(`${JSON.stringify(message)}\n`)
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.process.kill()
    this.onclose?.()
  }

  /** Why the connection ended and the end of what the server wrote to stderr, for error messages. */
  problemNote(): string {
    const tail = this.stderrTail.trim()
    return `${this.failure ? `; ${this.failure}` : ''}${tail ? `; its stderr ends: ${tail.slice(-500)}` : ''}`
  }

  private fail(error: Error): void {
    this.failure ??= error.message
    this.onerror?.(error)
    void this.close()
  }
}
