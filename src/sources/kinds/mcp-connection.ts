import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { type JSONRPCMessage, type Tool, ToolSchema } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import type { HttpClient } from '../../net/http'
import { maxMessageBytes } from './process-transport'

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
    if (empty) return new Response(null, { status: response.status, headers: response.headers })
    const type = response.headers['content-type'] ?? ''
    const stream = /^text\/event-stream/i.test(type)
    // Counted before the SDK sees any of it: an answer it fails to read it would wait on until its timeout.
    if (stream && countEventEnds(response.body) > maxMessagesPerAnswer) throw tooManyMessages()
    if (/^application\/json/i.test(type)) assertFewMessages(response.body)
    return new Response(stream ? pacedEvents(response.body) : (response.body as BodyInit), {
      status: response.status,
      headers: response.headers,
    })
  }
}

/**
 * Most messages one answer may carry: a request is answered with its response and the notifications of
 * its run (a long call's progress, its log lines), not a flood. Past it the answer is refused.
 */
export const maxMessagesPerAnswer = 10_000

// Bytes the SDK's event-stream parser is handed at a time, the event loop free between two handfuls.
const pacedChunkBytes = 16 * 1024

/**
 * An event-stream answer handed to the SDK a handful of bytes at a time, each after a macrotask: the
 * SDK parses and dispatches every event of a chunk in microtasks, so 16 MB of tiny notifications
 * handed over at once held every tenant's calls (and /healthz) for most of a minute.
 */
function pacedEvents(body: Uint8Array): ReadableStream<Uint8Array> {
  let offset = 0
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (offset >= body.byteLength) return controller.close()
      const end = Math.min(offset + pacedChunkBytes, body.byteLength)
      controller.enqueue(body.subarray(offset, end))
      offset = end
      await new Promise((resolve) => setTimeout(resolve, 0))
    },
  })
}

function tooManyMessages(): Error {
  return new Error(`the MCP server sent more than ${maxMessagesPerAnswer} messages in one answer`)
}

/** Blank lines (an event's end): \n\n, or \r\n\r\n. */
function countEventEnds(chunk: Uint8Array): number {
  let count = 0
  for (let index = 1; index < chunk.length; index++) {
    if (chunk[index] === 10 && (chunk[index - 1] === 10 || (chunk[index - 1] === 13 && chunk[index - 2] === 10)))
      count++
  }
  return count
}

/**
 * A JSON answer holding a batch: the SDK parses and dispatches every message of it at once, on the
 * service's thread, so a batch is held to maxMessagesPerAnswer before it is handed over.
 */
function assertFewMessages(body: Uint8Array): void {
  // A batch starts with "[" (after optional whitespace); one message is an object and costs nothing.
  let start = 0
  while (start < body.length && (body[start] === 32 || body[start] === 10 || body[start] === 13 || body[start] === 9))
    start++
  if (body[start] !== 91) return
  let depth = 0
  let inString = false
  let messages = 0
  for (let index = start; index < body.length; index++) {
    const byte = body[index]
    if (inString) {
      if (byte === 92) index++
      else if (byte === 34) inString = false
    } else if (byte === 34) inString = true
    else if (byte === 91 || byte === 123) {
      depth++
      if (depth === 2) messages++
      if (messages > maxMessagesPerAnswer) throw tooManyMessages()
    } else if (byte === 93 || byte === 125) depth--
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
