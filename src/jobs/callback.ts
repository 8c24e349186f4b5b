import { carrierHeaders, type TraceCarrier } from '../core/tracing'
import type { HttpClient } from '../net/http'

/**
 * Webhook on completion: POST the job as JSON, signed like Stripe's webhooks so a receiver can verify
 * it and reject replays: `X-Toolport-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`.
 */
export async function signPayload(secret: string | Uint8Array, timestamp: number, body: string): Promise<string> {
  const keyBytes = (typeof secret === 'string' ? new TextEncoder().encode(secret) : secret) as Uint8Array<ArrayBuffer>
  const key = await crypto.subtle.importKey('raw', keyBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(`${timestamp}.${body}`)))
  return `t=${timestamp},v1=${Array.from(mac, (byte) => byte.toString(16).padStart(2, '0')).join('')}`
}

export interface CallbackOptions {
  http: HttpClient
  secret: string | Uint8Array
  attempts: number
  /** First retry delay; each next one is four times longer. */
  backoffMs: number
  sleep?: (ms: number) => Promise<void>
}

/**
 * One webhook delivery: the same id on every retry of it (receivers deduplicate by it), and a new one for
 * a new run of the job (a run taken over by another instance delivers again, as attempt n of the job).
 */
export interface Delivery {
  /** `{job id}.{job attempt}`: stable across retries of this delivery. */
  id: string
  url: string
  payload: unknown
  /** The W3C trace context of the call that made the job: the receiver may join its trace. */
  trace?: TraceCarrier | undefined
}

export function deliveryOf(
  job: { id: string; attempt?: number | undefined; trace?: TraceCarrier | null | undefined },
  url: string,
  payload: unknown,
): Delivery {
  return { id: `${job.id}.${job.attempt ?? 1}`, url, payload, ...(job.trace?.traceparent ? { trace: job.trace } : {}) }
}

/**
 * POSTs a delivery once: resolves true on a 2xx. The delivery id and this try's number go in headers
 * and in the signed body (`delivery`), so a receiver can verify both and drop a repeat.
 */
export async function deliverOnce(
  delivery: Delivery,
  tryNumber: number,
  options: Pick<CallbackOptions, 'http' | 'secret'>,
): Promise<boolean> {
  const body = JSON.stringify({
    ...(delivery.payload as Record<string, unknown>),
    delivery: { id: delivery.id, attempt: tryNumber },
  })
  const timestamp = Math.floor(Date.now() / 1000)
  try {
    const response = await options.http.request({
      url: delivery.url,
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-toolport-signature': await signPayload(options.secret, timestamp, body),
        'x-toolport-delivery': delivery.id,
        'x-toolport-delivery-attempt': String(tryNumber),
        // A webhook is toolport's own request: it carries the job's trace (tracing on), as a source's does.
        ...carrierHeaders(delivery.trace),
      },
      body,
      timeoutMs: 10_000,
      maxBytes: 4096,
      maxRedirects: 0,
    })
    return response.status >= 200 && response.status < 300
  } catch {
    // Refused, unreachable or slow: the next try (or the job record) tells the story.
    return false
  }
}

/** Delivers with retries in this process; resolves true once a 2xx arrives, false after the last try. */
export async function deliverCallback(delivery: Delivery, options: CallbackOptions): Promise<boolean> {
  const sleep = options.sleep ?? ((ms: number) => new Promise((resolve) => setTimeout(resolve, ms)))
  for (let tryNumber = 1; tryNumber <= options.attempts; tryNumber++) {
    if (tryNumber > 1) await sleep(options.backoffMs * 4 ** (tryNumber - 2))
    if (await deliverOnce(delivery, tryNumber, options)) return true
  }
  return false
}
