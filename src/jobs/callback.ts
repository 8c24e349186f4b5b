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

/** Delivers with retries; resolves true once a 2xx arrives, false after the last attempt failed. */
export async function deliverCallback(url: string, payload: unknown, options: CallbackOptions): Promise<boolean> {
  const sleep = options.sleep ?? ((ms: number) => new Promise((resolve) => setTimeout(resolve, ms)))
  const body = JSON.stringify(payload)
  for (let attempt = 0; attempt < options.attempts; attempt++) {
    if (attempt > 0) await sleep(options.backoffMs * 4 ** (attempt - 1))
    const timestamp = Math.floor(Date.now() / 1000)
    try {
      const response = await options.http.request({
        url,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-toolport-signature': await signPayload(options.secret, timestamp, body),
        },
        body,
        timeoutMs: 10_000,
        maxBytes: 4096,
        maxRedirects: 0,
      })
      if (response.status >= 200 && response.status < 300) return true
    } catch {
      // Refused, unreachable or slow: the next attempt (or the job record) tells the story.
    }
  }
  return false
}
