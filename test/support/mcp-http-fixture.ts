import { createServer, type Server as HttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { createFixtureMcpServer } from './mcp-fixture'

type McpServerLike = ReturnType<typeof createFixtureMcpServer>

export interface McpHttpFixture {
  url: string
  port: number
  /** 'ok': the fixture server; 'hang': never answers; 'garbage': answers text that is not JSON-RPC. */
  mode: 'ok' | 'hang' | 'garbage'
  requests: number
  stop(): Promise<void>
}

/**
 * The fixture MCP server over Streamable HTTP on 127.0.0.1, stateless (a server per request); `make`
 * builds another server per request instead (a suite's own hostile one).
 */
export async function startMcpHttpFixture(make?: () => McpServerLike): Promise<McpHttpFixture> {
  const state = { grown: false }
  const fixture: McpHttpFixture = { url: '', port: 0, mode: 'ok', requests: 0, stop: async () => {} }
  const http: HttpServer = createServer(async (request, response) => {
    fixture.requests++
    if (fixture.mode === 'hang') return
    if (fixture.mode === 'garbage') {
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end('{"this is": "not json-rpc"')
      return
    }
    if (request.method !== 'POST') {
      response.writeHead(405).end()
      return
    }
    const server = make ? make() : createFixtureMcpServer({ flood: () => {} }, state)
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined })
    response.on('close', () => {
      void transport.close()
      void server.close()
    })
    await server.connect(transport)
    await transport.handleRequest(request, response)
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  fixture.port = (http.address() as AddressInfo).port
  fixture.url = `http://127.0.0.1:${fixture.port}/mcp`
  fixture.stop = () =>
    new Promise<void>((resolve) => {
      http.closeAllConnections()
      http.close(() => resolve())
    })
  return fixture
}
