import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface OtlpSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  attributes: Record<string, unknown>
  /** OTLP's SpanKind number (1 internal, 2 server, 3 client). */
  kind?: number
  /** OTLP's status code (1 ok, 2 error) and message, when set. */
  status?: { code?: number; message?: string }
  events: string[]
  traceState?: string
}

interface OtlpBody {
  resourceSpans?: Array<{
    scopeSpans?: Array<{
      spans?: Array<{
        traceId: unknown
        spanId: unknown
        parentSpanId?: unknown
        name: unknown
        attributes?: Array<{ key: string; value: Record<string, unknown> }>
        kind?: number
        status?: { code?: number; message?: string }
        events?: Array<{ name: string }>
        traceState?: string
      }>
    }>
  }>
}

export interface OtlpReceiver {
  url: string
  spans: OtlpSpan[]
  /** The spans of one trace, once at least `count` of them arrived (a guard against a hang, not a speed goal). */
  spansOf(traceId: string, count: number): Promise<OtlpSpan[]>
  /** The spans of one trace once a span of this name is among them (a call's span ends after its children). */
  spansUntil(traceId: string, name: string): Promise<OtlpSpan[]>
  close(): Promise<void>
}

/** A W3C traceparent of a new trace, as a caller would send it, with its ids. */
export function newParent(): { traceId: string; spanId: string; traceparent: string } {
  const hex = (length: number) =>
    Array.from(crypto.getRandomValues(new Uint8Array(length / 2)), (byte) => byte.toString(16).padStart(2, '0')).join(
      '',
    )
  const traceId = hex(32)
  const spanId = hex(16)
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` }
}

/** An OTLP/HTTP receiver: the exporter's JSON (OTLP/JSON: hex ids, typed attribute values), decoded. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: OtlpSpan[] = []
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const bytes = Buffer.concat(chunks)
      // OTLP/JSON (suites set OTEL_EXPORTER_OTLP_PROTOCOL=http/json): hex ids, typed attribute values.
      if (!(request.headers['content-type'] ?? '').includes('json')) {
        response.writeHead(415).end('this receiver takes OTLP/JSON: set OTEL_EXPORTER_OTLP_PROTOCOL=http/json')
        return
      }
      const body = JSON.parse(bytes.toString('utf8')) as OtlpBody
      for (const resource of body.resourceSpans ?? []) {
        for (const scope of resource.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            const attributes: Record<string, unknown> = {}
            for (const { key, value } of span.attributes ?? []) {
              const raw = value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue
              attributes[key] = typeof raw === 'object' && raw !== null ? Number(raw) : raw
            }
            spans.push({
              traceId: String(span.traceId),
              spanId: String(span.spanId),
              ...(span.parentSpanId ? { parentSpanId: String(span.parentSpanId) } : {}),
              name: String(span.name),
              attributes,
              ...(span.kind !== undefined ? { kind: span.kind } : {}),
              ...(span.status && Object.keys(span.status).length > 0 ? { status: span.status } : {}),
              events: (span.events ?? []).map((event) => event.name),
              ...(span.traceState ? { traceState: span.traceState } : {}),
            })
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    async spansOf(traceId, count) {
      const deadline = Date.now() + 30_000
      for (;;) {
        const found = spans.filter((span) => span.traceId === traceId)
        if (found.length >= count) return found
        if (Date.now() > deadline) throw new Error(`${found.length} of ${count} spans of trace ${traceId} arrived`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    },
    async spansUntil(traceId, name) {
      const deadline = Date.now() + 30_000
      for (;;) {
        const found = spans.filter((span) => span.traceId === traceId)
        if (found.some((span) => span.name === name)) return found
        if (Date.now() > deadline) throw new Error(`no span ${name} in trace ${traceId} (${found.length} others)`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}
