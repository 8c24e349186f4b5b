import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import {
  type ClientReport,
  type LongCall,
  linkOf,
  longArguments,
  longRequestTimeoutMs,
  pdfArguments,
  resourceOf,
} from './steps'

/**
 * The steps with the TypeScript SDK 2.4 (`@modelcontextprotocol/client`), pinned to protocol
 * 2026-07-28: no initialize; connect() sends server/discover, which must offer 2026-07-28, and every
 * request then carries the version, client info and capabilities in its `_meta`.
 *
 * API used: new Client(info, { versionNegotiation: { mode: { pin: '2026-07-28' } } }), connect(),
 * getNegotiatedProtocolVersion(), listTools(), callTool(), readResource(), getPrompt().
 *
 * 2026-07-28 has no tasks in its core, and this SDK has no runtime for the Tasks extension (its task
 * types are 2025-11-25 wire vocabulary only; tasks/get toward a 2026-07-28 peer is refused locally), so
 * the 70 s call is one tools/call with a progressToken (onprogress), resetTimeoutOnProgress and a
 * 150 s timeout: toolport's progress heartbeat keeps it open to the end, as for 2025-03-26.
 */
export async function runSdk24(url: string, headers: Record<string, string>): Promise<ClientReport> {
  const client = new Client(
    { name: 'toolport-clients-sdk-2.4', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  )
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }))
  try {
    const { tools } = await client.listTools()
    const pdf = await client.callTool({ name: 'pdf_generation', arguments: pdfArguments })
    const link = linkOf(pdf.content)
    const read = link ? await client.readResource({ uri: link }) : undefined
    const prompt = await client.getPrompt({ name: 'toolport_context' })
    let progressNotes = 0
    const long = await client.callTool(
      { name: 'execute_command', arguments: longArguments },
      {
        onprogress: () => {
          progressNotes++
        },
        resetTimeoutOnProgress: true,
        timeout: longRequestTimeoutMs,
      },
    )
    const result: LongCall = {
      via: 'progress',
      progressNotes,
      result: { isError: long.isError === true, structuredContent: long.structuredContent },
    }
    return {
      protocolVersion: client.getNegotiatedProtocolVersion(),
      tools: tools.map((tool) => tool.name),
      pdf: { isError: pdf.isError === true, link },
      resource: resourceOf(read?.contents),
      prompt: prompt.messages,
      long: result,
    }
  } finally {
    await client.close()
  }
}
