import type { JsonSchema } from '../core/json-schema'
import { UsageError } from './args'

export interface CallAnswer {
  status: number
  body: unknown
}

/** Where a call goes: a running toolport over HTTP, or an app built inside this process. */
export interface Target {
  inputSchema(tool: string): Promise<JsonSchema>
  call(tool: string, input: unknown, workspace: string): Promise<CallAnswer>
  download(url: string): Promise<Uint8Array>
}

/** Anything that answers a Request the way fetch does: a Hono app's `request`, or fetch itself. */
export type Fetcher = (url: string, init?: RequestInit) => Promise<Response>

/**
 * One implementation for both modes: they differ only in how a request reaches the service, so
 * the in-process call takes exactly the path a remote one does (auth, validation, problems).
 */
export function createTarget(base: string, fetcher: Fetcher, key: string | undefined, files: Fetcher): Target {
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {}
  return {
    async inputSchema(tool) {
      const response = await fetcher(`${base}/v1/tools`, { headers })
      const body = (await readBody(response)) as { tools?: Array<{ name: string; input_schema: JsonSchema }> }
      if (!response.ok || !Array.isArray(body.tools)) throw new CallFailed({ status: response.status, body })
      const entry = body.tools.find((candidate) => candidate.name === tool)
      if (!entry) {
        const known = body.tools.map((candidate) => candidate.name).join(', ')
        throw new UsageError(`Unknown tool ${JSON.stringify(tool)}. Tools: ${known}.`)
      }
      return entry.input_schema
    },
    async call(tool, input, workspace) {
      const response = await fetcher(`${base}/v1/tools/${tool}?workspace=${encodeURIComponent(workspace)}`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify(input),
      })
      return { status: response.status, body: await readBody(response) }
    },
    async download(url) {
      // No key here: download links carry their own credential, and a presigned S3 URL refuses extra auth.
      const response = await files(url)
      if (!response.ok) throw new Error(`download of ${url} failed with HTTP ${response.status}`)
      return new Uint8Array(await response.arrayBuffer())
    },
  }
}

/** A call the service refused: carries its answer (usually a problem document) to print. */
export class CallFailed extends Error {
  constructor(readonly answer: CallAnswer) {
    super(`HTTP ${answer.status}`)
  }
}

async function readBody(response: Response): Promise<unknown> {
  const text = await response.text()
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}
