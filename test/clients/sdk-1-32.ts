import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import {
  type ClientReport,
  distinct,
  type LongCall,
  linkOf,
  longArguments,
  longRequestTimeoutMs,
  pdfArguments,
  resourceOf,
} from './steps'

/**
 * The steps with the TypeScript SDK 1.32 (`@modelcontextprotocol/sdk`): protocol 2025-11-25, so the
 * 70 s call goes as a task through the SDK's own task client (client.experimental.tasks.callToolStream:
 * tools/call with `task`, then tasks/get until it ends, then tasks/result).
 */
export async function runSdk132(url: string, headers: Record<string, string>): Promise<ClientReport> {
  const client = new Client({ name: 'toolport-clients-sdk-1.32', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } })
  await client.connect(transport)
  try {
    const { tools } = await client.listTools()
    const pdf = await client.callTool({ name: 'pdf_generation', arguments: pdfArguments })
    const link = linkOf(pdf.content)
    const read = link ? await client.readResource({ uri: link }) : undefined
    const prompt = await client.getPrompt({ name: 'toolport_context' })
    return {
      protocolVersion: transport.protocolVersion,
      tools: tools.map((tool) => tool.name),
      pdf: { isError: pdf.isError === true, link },
      resource: resourceOf(read?.contents),
      prompt: prompt.messages,
      long: await longAsTask(client),
    }
  } finally {
    await client.close()
  }
}

async function longAsTask(client: Client): Promise<LongCall> {
  const statuses: string[] = []
  const stream = client.experimental.tasks.callToolStream(
    { name: 'execute_command', arguments: longArguments },
    undefined,
    { task: { ttl: 600_000 }, timeout: longRequestTimeoutMs },
  )
  for await (const message of stream) {
    if (message.type === 'taskCreated' || message.type === 'taskStatus') statuses.push(message.task.status)
    else if (message.type === 'error') throw message.error
    else {
      const result = message.result as { isError?: boolean; structuredContent?: unknown }
      return {
        via: 'task',
        statuses: distinct(statuses),
        result: { isError: result.isError === true, structuredContent: result.structuredContent },
      }
    }
  }
  throw new Error('the task stream ended without a result')
}
