import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { type JSONRPCMessage, type Tool, ToolSchema } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import type { HttpClient } from '../../net/http'
import type { SourceProcess } from '../types'

/** Largest MCP message (or response body) a source may send: past it, the connection is dropped. */
export const maxMessageBytes = 16 * 1024 * 1024

/**
 * The SDK's fetch, made of toolport's outbound client: every request goes through the address rules
 * (re-checked on each redirect), with a size cap and a deadline. The response is read whole; stateless
 * servers end each response stream with the result. GET (a standing server-to-client stream) is
 * answered 405 here, which the SDK takes as "this server offers none": nothing is held open.
 */
export function fetchThrough(http: HttpClient, timeoutMs: number, secretHeaders: readonly string[] = []) {
  return async (input: string | URL, init?: RequestInit): Promise<Response> => {
    const method = (init?.method ?? 'GET').toUpperCase()
    if (method === 'GET') return new Response(null, { status: 405, statusText: 'Method Not Allowed' })
    const headers: Record<string, string> = {}
    new Headers(init?.headers).forEach((value, name) => {
      headers[name] = value
    })
    const body = typeof init?.body === 'string' ? init.body : undefined
    const response = await http.request({
      url: String(input),
      method: method === 'DELETE' ? 'DELETE' : 'POST',
      headers,
      ...(body !== undefined ? { body } : {}),
      maxBytes: maxMessageBytes,
      timeoutMs,
      // The manifest's headers (its secrets among them) never follow a redirect to another origin.
      secretHeaders,
      ...(init?.signal ? { signal: init.signal } : {}),
    })
    if (response.truncated) throw new Error(`the MCP server sent a response larger than ${maxMessageBytes} bytes`)
    // 204 and 202 carry no body, and Response refuses one for them.
    const empty = response.status === 204 || response.status === 202 || response.status === 304
    return new Response(empty ? null : (response.body as BodyInit), {
      status: response.status,
      headers: response.headers,
    })
  }
}

/**
 * An MCP transport over a sandboxed process's stdin and stdout: one JSON-RPC message per line. A line
 * that is not JSON-RPC, or output past the size cap, ends the connection: a server that breaks the
 * protocol cannot be trusted with the next call either.
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
            return this.fail(new Error(`the MCP server wrote a line that is not JSON-RPC: ${line.slice(0, 200)}`))
          }
          this.deliver(message)
        }
        newline = text.indexOf('\n')
      }
      this.buffer += text
      if (this.buffer.length > maxMessageBytes) {
        return this.fail(new Error(`the MCP server sent a message larger than ${maxMessageBytes} bytes`))
      }
    })
    this.process.onStderr((text) => {
      this.stderrTail = (this.stderrTail + text).slice(-2_000)
    })
    void this.process.exited.then(({ code }) => {
      if (!this.closed) this.fail(new Error(`the MCP server exited (code ${code ?? 'killed'})`))
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
    if (this.closed) throw new Error('the MCP server connection is closed')
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

/**
 * Lists every tool of a connected server, following pagination (bounded). Each tool is checked on its
 * own: one the protocol's Tool shape refuses (an inputSchema that is not an object, a name that is no
 * string) is skipped with why, and the server's other tools are served.
 */
export async function listAllTools(
  client: Client,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<{ tools: Tool[]; skipped: string[] }> {
  const tools: Tool[] = []
  const skipped: string[] = []
  let cursor: string | undefined
  for (let page = 0; page < 50; page++) {
    const result = await client.request({ method: 'tools/list', params: cursor ? { cursor } : {} }, ToolPage, {
      signal,
      timeout: timeoutMs,
    })
    for (const [index, raw] of result.tools.entries()) {
      const parsed = ToolSchema.safeParse(raw)
      if (parsed.success) tools.push(parsed.data)
      else skipped.push(skippedTool(raw, index, parsed.error))
    }
    cursor = result.nextCursor
    if (!cursor) break
  }
  return { tools, skipped }
}

/** A page of tools/list as it comes: the tools unchecked, each checked by listAllTools on its own. */
const ToolPage = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() })

function skippedTool(raw: unknown, index: number, error: z.ZodError): string {
  const name = (raw as { name?: unknown } | null)?.name
  const label = typeof name === 'string' ? JSON.stringify(name.slice(0, 80)) : `number ${index + 1} of its page`
  const issue = error.issues[0]
  const where = issue?.path.length ? issue.path.join('.') : 'the tool'
  return `skipped ${label}: ${where} ${issue ? issue.message.toLowerCase().slice(0, 120) : 'is not an MCP tool'}`
}
