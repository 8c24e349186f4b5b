import { ToolError } from '../core/errors'
import type { HttpClient, HttpRequest } from '../net/http'

export interface UpstreamCall {
  source: string
  tool: string
  request: Pick<HttpRequest, 'url' | 'method' | 'headers' | 'body' | 'secretHeaders'>
  timeoutMs: number
  maxBytes: number
  signal: AbortSignal
}

// Enough of an upstream's error body for a model to see what went wrong, not enough to flood it.
const excerptChars = 500

/**
 * One request to a source's upstream (a worker, an OpenAPI operation), answered as parsed JSON. The
 * outbound client applies the address rules on every hop; what the upstream gets wrong (an error
 * status, a body past the size cap, text that is not JSON) is a 502 naming the source, never a 500.
 */
export async function upstreamJson(http: HttpClient, call: UpstreamCall): Promise<unknown> {
  const response = await http.request({
    ...call.request,
    timeoutMs: call.timeoutMs,
    maxBytes: call.maxBytes,
    signal: call.signal,
  })
  const text = new TextDecoder().decode(response.body)
  if (response.truncated) {
    throw upstreamError(call, `answered with more than ${call.maxBytes} bytes`, 'Ask for less data in one call.')
  }
  if (response.status < 200 || response.status > 299) {
    const validation = response.status === 400 || response.status === 422
    throw new ToolError(
      validation ? 'validation' : 'connection',
      `${call.tool} failed upstream (HTTP ${response.status}): ${excerpt(text)}`,
      {
        hint: validation
          ? 'The upstream refused the input; fix it as the message says and call again.'
          : 'The upstream service failed; try again later, and tell the operator if it persists.',
        details: { source: call.source, upstream_status: response.status },
      },
    )
  }
  if (text.trim() === '') return null
  try {
    return JSON.parse(text)
  } catch {
    throw upstreamError(
      call,
      `answered with text that is not JSON: ${excerpt(text)}`,
      'Tell the operator; do not retry unchanged.',
    )
  }
}

/** The outbound client a source needs to load; a runtime without one puts the source in error. */
export function outboundClient(http: HttpClient | undefined): HttpClient {
  if (!http) throw new Error('this runtime has no outbound HTTP client')
  return http
}

export function upstreamError(call: Pick<UpstreamCall, 'source' | 'tool'>, problem: string, hint: string): ToolError {
  return new ToolError('connection', `The upstream of ${call.tool} (source ${call.source}) ${problem}.`, {
    hint,
    details: { source: call.source },
  })
}

export function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length <= excerptChars ? flat : `${flat.slice(0, excerptChars)}…`
}
