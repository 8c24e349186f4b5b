import { Client } from 'mcp-sdk-2025-03-26/client/index.js'
import { StreamableHTTPClientTransport } from 'mcp-sdk-2025-03-26/client/streamableHttp.js'
import type { JSONRPCMessage } from 'mcp-sdk-2025-03-26/types.js'
import { type ClientReport, type LongCall, linkOf, longArguments, pdfArguments, resourceOf } from './steps'

/**
 * The steps with the TypeScript SDK 1.12 (npm alias `mcp-sdk-2025-03-26`): protocol 2025-03-26, which
 * has neither tasks, nor resource_link blocks, nor structuredContent. The 70 s call goes with a
 * progressToken and resetTimeoutOnProgress, under the SDK's default 60 s request timeout: toolport's
 * progress heartbeat (every 5 s) is what keeps the request alive. Results are read as a client of that
 * version reads them: from their text blocks.
 */
export async function runSdk112(url: string, headers: Record<string, string>): Promise<ClientReport> {
  const client = new Client({ name: 'toolport-clients-sdk-1.12', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } })
  // This SDK does not say what it negotiated: read it off the initialize result as it arrives.
  let protocolVersion: string | undefined
  watchMessages(transport, (message) => {
    const result = (message as { result?: { protocolVersion?: unknown } }).result
    if (protocolVersion === undefined && typeof result?.protocolVersion === 'string') {
      protocolVersion = result.protocolVersion
    }
  })
  await client.connect(transport)
  try {
    const { tools } = await client.listTools()
    const pdf = await client.callTool({ name: 'pdf_generation', arguments: pdfArguments })
    const link = linkOf(pdf.content)
    const read = link ? await client.readResource({ uri: link }) : undefined
    const prompt = await client.getPrompt({ name: 'toolport_context' })
    let progressNotes = 0
    const long = await client.callTool({ name: 'execute_command', arguments: longArguments }, undefined, {
      onprogress: () => {
        progressNotes++
      },
      resetTimeoutOnProgress: true,
    })
    const result: LongCall = {
      via: 'progress',
      progressNotes,
      result: { isError: long.isError === true, structuredContent: jsonText(long.content) },
    }
    return {
      protocolVersion,
      tools: tools.map((tool) => tool.name),
      pdf: { isError: pdf.isError === true, link },
      resource: resourceOf(read?.contents),
      prompt: prompt.messages as ClientReport['prompt'],
      long: result,
    }
  } finally {
    await client.close()
  }
}

/** Calls `watch` with every message the transport hands the client, before the client sees it. */
function watchMessages(transport: StreamableHTTPClientTransport, watch: (message: JSONRPCMessage) => void): void {
  let handler: ((message: JSONRPCMessage) => void) | undefined
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () => handler,
    set: (next: ((message: JSONRPCMessage) => void) | undefined) => {
      handler = next
        ? (message) => {
            watch(message)
            next(message)
          }
        : undefined
    },
  })
}

/** The first text block parsed as JSON: the tool's output, for versions without structuredContent. */
function jsonText(content: unknown): unknown {
  const text = (content as Array<{ type: string; text?: string }>).find((block) => block.type === 'text')?.text
  try {
    return text === undefined ? undefined : JSON.parse(text)
  } catch {
    return text
  }
}
