import { describe, type ExpectStatic, it } from 'vitest'
import type { TestServer } from '../support/server'
import { runPython } from './python'
import { runSdk112 } from './sdk-1-12'
import { runSdk132 } from './sdk-1-32'
import { runSdk24 } from './sdk-2-4'
import {
  apiKey,
  bearer,
  type ClientReport,
  clientTimeoutMs,
  expectProgress,
  expectReport,
  expectTask,
  type LongCall,
  startClientServer,
} from './steps'

// Real MCP clients, each against its own toolport server (issue #39): each lists the tools, calls one,
// reads the resource_link it returned through resources/read, gets the toolport_context prompt, and
// finishes a 70 s call (as a task where the protocol version has tasks). They run at once, so the
// file takes about as long as one 70 s call.

async function withServer(
  expect: ExpectStatic,
  run: (server: TestServer) => Promise<ClientReport>,
  protocolVersion: string,
  long: (expect: ExpectStatic, long: LongCall) => void,
): Promise<void> {
  const server = await startClientServer()
  try {
    const report = await run(server)
    await expectReport(expect, server, report, protocolVersion)
    long(expect, report.long)
  } finally {
    await server.stop()
  }
}

describe.concurrent('real MCP clients', () => {
  it(
    'TypeScript SDK 1.32 (2025-11-25, the 70 s call as a task)',
    ({ expect }) => withServer(expect, (server) => runSdk132(server.url, bearer), '2025-11-25', expectTask),
    clientTimeoutMs,
  )

  it(
    'TypeScript SDK 1.12 (2025-03-26, the 70 s call kept open by progress)',
    ({ expect }) => withServer(expect, (server) => runSdk112(server.url, bearer), '2025-03-26', expectProgress),
    clientTimeoutMs,
  )

  it(
    'TypeScript SDK 2.4 (2026-07-28 without initialize, the 70 s call kept open by progress)',
    ({ expect }) => withServer(expect, (server) => runSdk24(server.url, bearer), '2026-07-28', expectProgress),
    clientTimeoutMs,
  )

  it(
    'Python mcp 2.3.0 (2025-11-25, the 70 s call as a task)',
    ({ expect }) => withServer(expect, (server) => runPython(server.url, apiKey), '2025-11-25', expectTask),
    clientTimeoutMs,
  )

  it(
    'Python mcp 2.3.0 negotiating by itself (server/discover: 2026-07-28, the 70 s call kept open by progress)',
    ({ expect }) =>
      withServer(expect, (server) => runPython(server.url, apiKey, 'client_auto.py'), '2026-07-28', expectProgress),
    clientTimeoutMs,
  )
})
