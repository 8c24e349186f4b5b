import { readFileSync } from 'node:fs'

/**
 * Lambda HTTP events built from recorded shapes (test/fixtures/lambda-events): everything API
 * Gateway or the function URL service sends stays as recorded; a test changes only the request line,
 * the query, the body and the bearer key.
 */
export type EventShape = 'api-gateway-rest-v1' | 'http-api-v2' | 'function-url'

export interface EventRequest {
  method?: string
  path: string
  query?: Record<string, string>
  /** JSON bodies are serialized; strings are sent as they are. */
  body?: unknown
  /** Send the body base64-encoded, as API Gateway does for binary media types. */
  base64?: boolean
  /** The bearer key; null sends no Authorization header. */
  key?: string | null
  headers?: Record<string, string>
}

// biome-ignore lint/suspicious/noExplicitAny: the recorded events are arbitrary JSON
type Json = any

const recorded = new Map<EventShape, Json>()

function template(shape: EventShape): Json {
  let event = recorded.get(shape)
  if (!event) {
    event = JSON.parse(readFileSync(new URL(`../fixtures/lambda-events/${shape}.json`, import.meta.url), 'utf8'))
    recorded.set(shape, event)
  }
  return structuredClone(event)
}

export function lambdaEvent(shape: EventShape, request: EventRequest): Json {
  const event = template(shape)
  const method = request.method ?? 'POST'
  const query = request.query ?? {}
  const text =
    request.body === undefined
      ? undefined
      : typeof request.body === 'string'
        ? request.body
        : JSON.stringify(request.body)
  event.body = text === undefined ? null : request.base64 ? Buffer.from(text).toString('base64') : text
  event.isBase64Encoded = Boolean(request.base64 && text !== undefined)
  const headers: Record<string, string> = { ...request.headers }
  if (request.key !== null) headers.authorization = `Bearer ${request.key ?? ''}`

  if (shape === 'api-gateway-rest-v1') {
    event.path = request.path
    event.httpMethod = method
    event.requestContext.path = `/${event.requestContext.stage}${request.path}`
    event.requestContext.httpMethod = method
    event.pathParameters = { proxy: request.path.slice(1) }
    const entries = Object.entries(query)
    event.queryStringParameters = entries.length ? query : null
    event.multiValueQueryStringParameters = entries.length
      ? Object.fromEntries(entries.map(([name, value]) => [name, [value]]))
      : null
    delete event.headers.Authorization
    delete event.multiValueHeaders.Authorization
    for (const [name, value] of Object.entries(headers)) {
      event.headers[name] = value
      event.multiValueHeaders[name] = [value]
    }
    return event
  }

  event.rawPath = request.path
  event.requestContext.http.method = method
  event.requestContext.http.path = request.path
  event.rawQueryString = new URLSearchParams(query).toString()
  if (Object.keys(query).length) event.queryStringParameters = query
  else delete event.queryStringParameters
  delete event.headers.authorization
  if (text === undefined) delete event.headers['content-length']
  else if (event.headers['content-length']) event.headers['content-length'] = String(Buffer.byteLength(text))
  for (const [name, value] of Object.entries(headers)) event.headers[name.toLowerCase()] = value
  return event
}

export type DestinationShape = 'destination-retries-exhausted' | 'destination-event-age-exceeded'

/**
 * The invocation record Lambda sends an asynchronous invocation's on-failure destination (AWS docs,
 * "Capturing records of Lambda asynchronous invocations"), around a job event.
 */
export function destinationRecord(shape: DestinationShape, job: { tenant: string; id: string }): Json {
  const record = JSON.parse(readFileSync(new URL(`../fixtures/lambda-events/${shape}.json`, import.meta.url), 'utf8'))
  record.requestPayload = { toolportJob: { tenant: job.tenant, id: job.id } }
  return record
}
