import { randomFillSync } from 'node:crypto'
import type { IdGenerator } from '@opentelemetry/sdk-trace-base'

/** Random bytes drawn at once: 512 span ids' worth. */
const poolBytes = 4096
const zeroIds: Record<number, string> = { 16: '0'.repeat(16), 32: '0'.repeat(32) }

/**
 * Trace and span ids from the system's CSPRNG, drawn in pools: one randomFillSync and one hex
 * encoding per 512 span ids, each id then a slice of the pool's hex, where the SDK's default generator
 * makes two Math.random calls and a hex encoding per id (a tenth of what a span cost a read_file call,
 * bench/tracing.ts). An all-zero id, which W3C Trace Context forbids, is drawn again.
 */
export function pooledIdGenerator(): IdGenerator {
  const bytes = Buffer.allocUnsafe(poolBytes)
  let hex = ''
  let at = poolBytes * 2
  function take(length: number): string {
    for (;;) {
      if (at + length > hex.length) {
        randomFillSync(bytes)
        hex = bytes.toString('hex')
        at = 0
      }
      const id = hex.slice(at, at + length)
      at += length
      if (id !== zeroIds[length]) return id
    }
  }
  return { generateTraceId: () => take(32), generateSpanId: () => take(16) }
}
