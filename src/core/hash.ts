/**
 * FNV-1a, 64 bits, as 16 hex digits: a short, stable fingerprint of a text (a tool's catalog entry, a
 * source manifest) computed synchronously. Not for secrets: use SHA-256 (digest.ts) where a
 * collision could be forced to some end.
 */
export function fingerprint(text: string): string {
  let high = 0xcbf29ce4
  let low = 0x84222325
  for (let index = 0; index < text.length; index++) {
    low = (low ^ text.charCodeAt(index)) >>> 0
    // Multiply the 64-bit state by the FNV prime 2^40 + 0x1b3, in 32-bit halves.
    const lowTimes = low * 0x1b3
    const carry = Math.floor(lowTimes / 0x100000000)
    high = (high * 0x1b3 + (low << 8) + carry) >>> 0
    low = lowTimes >>> 0
  }
  return high.toString(16).padStart(8, '0') + low.toString(16).padStart(8, '0')
}
