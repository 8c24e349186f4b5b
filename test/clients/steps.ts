import type { ExpectStatic } from 'vitest'
import { startTestServer, type TestServer } from '../support/server'

/**
 * What every real MCP client in this folder does against its own toolport server (issue #39), and how
 * the test checks what it saw. Each client (TS SDK 1.32, 1.12, 2.4, Python `mcp`) runs the same steps
 * and hands back a ClientReport of the same shape, so the assertions are written once:
 * 1. tools/list;
 * 2. tools/call pdf_generation, which makes out/report.pdf and returns a link to it;
 * 3. resources/read of that link: the PDF as a base64 blob;
 * 4. prompts/get toolport_context: the text of GET /v1/context as one user message;
 * 5. a 70 s execute_command, as a task where the protocol version has tasks, else with progress.
 */

export const apiKey = 'clients-key-0123456789abcdef'

export const pdfArguments = { content: 'Hello', content_type: 'text', output_path: 'out/report.pdf' }
export const pdfUri = 'toolport://workspace/default/out/report.pdf'

// Past every synchronous limit (40 s) and every SDK's default request timeout (60 s).
export const longCommand = 'sleep 70; echo done'
export const longArguments = { command: longCommand, timeout_seconds: 90 }
export const longStdout = 'done\n'

/** How long one client's whole run may take: the 70 s call, the PDF, and the server's start and stop. */
export const clientTimeoutMs = 180_000
/** The per-request timeout the clients give the long call (or each task poll): past the 70 s. */
export const longRequestTimeoutMs = 150_000

export interface ClientReport {
  /** The protocol version the client and server agreed on. */
  protocolVersion: string | undefined
  /** tools/list: the names. */
  tools: string[]
  /** tools/call pdf_generation: isError and the link found in its content. */
  pdf: { isError: boolean; link: string | undefined }
  /** resources/read of that link: what came back, the blob reduced to its first 5 bytes. */
  resource: Array<{ uri: string; mimeType: string | undefined; magic: string | undefined }>
  /** prompts/get toolport_context. */
  prompt: Array<{ role: string; content: { type: string; text?: string } }>
  /** The 70 s call. */
  long: LongCall
}

export type LongCall =
  | {
      via: 'task'
      /** Every status tasks/get (or tasks/status notifications) showed, in order, repeats dropped. */
      statuses: string[]
      /** The result of tasks/result. */
      result: LongResult
    }
  | { via: 'progress'; progressNotes: number; result: LongResult }

export interface LongResult {
  isError: boolean
  structuredContent: unknown
}

/** A toolport server with the shell (for execute_command) and one API key, as a deployment has. */
export function startClientServer(): Promise<TestServer> {
  return startTestServer({}, { shell: true, fileKeys: [{ tenant: 'clients', key: apiKey }] })
}

export const bearer = { authorization: `Bearer ${apiKey}` }

type Block = { type: string; uri?: unknown; text?: unknown }

/**
 * The link to the file a tool made: a resource_link block (2025-06-18 and later) or, for versions whose
 * clients refuse resource_link blocks (2025-03-26), a toolport:// resource URI in a text block.
 */
export function linkOf(content: unknown): string | undefined {
  const blocks = (Array.isArray(content) ? content : []) as Block[]
  const link = blocks.find((block) => block.type === 'resource_link' && typeof block.uri === 'string')
  if (link) return link.uri as string
  for (const block of blocks) {
    if (block.type !== 'text' || typeof block.text !== 'string') continue
    const found = /toolport:\/\/workspace\/[^\s"')\]]+/.exec(block.text)
    if (found) return found[0]
  }
  return undefined
}

/** The first bytes of a base64 blob, as text: '%PDF-' for a PDF. */
export function magicOf(blob: unknown): string | undefined {
  return typeof blob === 'string' ? Buffer.from(blob, 'base64').subarray(0, 5).toString('latin1') : undefined
}

/** resources/read contents reduced to what the test compares. */
export function resourceOf(contents: unknown): ClientReport['resource'] {
  return ((contents ?? []) as Array<{ uri: string; mimeType?: string; blob?: unknown }>).map((content) => ({
    uri: content.uri,
    mimeType: content.mimeType,
    magic: magicOf(content.blob),
  }))
}

/** Statuses in order, each run of repeats kept once. */
export function distinct(statuses: readonly string[]): string[] {
  return statuses.filter((status, index) => status !== statuses[index - 1])
}

/**
 * The checks every client's report must pass, each soft so that one run names every step a client
 * failed. `expect` is the test's own: the clients' tests run concurrently.
 */
export async function expectReport(
  expect: ExpectStatic,
  server: TestServer,
  report: ClientReport,
  protocolVersion: string,
): Promise<void> {
  expect.soft(report.protocolVersion, 'negotiated protocol version').toBe(protocolVersion)
  expect
    .soft(report.tools, 'tools/list')
    .toEqual(expect.arrayContaining(['execute_command', 'pdf_generation', 'read_file']))
  expect.soft(report.pdf, 'tools/call pdf_generation').toEqual({ isError: false, link: pdfUri })
  expect
    .soft(report.resource, 'resources/read of the link')
    .toEqual([{ uri: pdfUri, mimeType: 'application/pdf', magic: '%PDF-' }])
  const context = await (await fetch(`${server.url}/v1/context`, { headers: bearer })).text()
  expect
    .soft(report.prompt, 'prompts/get toolport_context')
    .toEqual([{ role: 'user', content: { type: 'text', text: context } }])
  expect.soft(report.long.result, 'the 70 s call').toMatchObject({
    isError: false,
    structuredContent: { exit_code: 0, stdout: longStdout, timed_out: false },
  })
}

/** The 70 s call went as a task: created working, followed with tasks/get until completed. */
export function expectTask(expect: ExpectStatic, long: LongCall): void {
  expect(long.via, 'the 70 s call as a task').toBe('task')
  if (long.via !== 'task') return
  expect.soft(long.statuses, 'task statuses').toEqual(['working', 'completed'])
}

/** The 70 s call stayed open on its request, kept alive by progress notifications. */
export function expectProgress(expect: ExpectStatic, long: LongCall): void {
  expect(long.via, 'the 70 s call with progress').toBe('progress')
  if (long.via !== 'progress') return
  expect.soft(long.progressNotes, 'progress notifications').toBeGreaterThan(0)
}
