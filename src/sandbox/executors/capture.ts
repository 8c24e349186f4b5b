import type { CapturedText } from './sandbox'

/**
 * Keeps the first and the last half of a stream up to a byte cap: the head shows how a command
 * started, the tail how it ended (errors usually come last). Everything in between is counted only.
 */
export interface OutputCapture {
  push(chunk: Uint8Array): void
  finish(): CapturedText
}

export function createOutputCapture(capBytes: number): OutputCapture {
  const headCap = Math.ceil(capBytes / 2)
  const tailCap = capBytes - headCap
  const head: Uint8Array[] = []
  let headBytes = 0
  const tail: Uint8Array[] = []
  let tailBytes = 0
  let total = 0
  return {
    push(chunk) {
      total += chunk.byteLength
      let rest = chunk
      if (headBytes < headCap) {
        const taken = rest.subarray(0, headCap - headBytes)
        head.push(taken)
        headBytes += taken.byteLength
        rest = rest.subarray(taken.byteLength)
      }
      if (rest.byteLength === 0 || tailCap === 0) return
      tail.push(rest)
      tailBytes += rest.byteLength
      while (tailBytes - (tail[0]?.byteLength ?? 0) >= tailCap) {
        tailBytes -= (tail.shift() as Uint8Array).byteLength
      }
    },
    finish() {
      const decoder = new TextDecoder()
      const headText = decoder.decode(concat(head))
      if (total <= capBytes) return { text: headText + decoder.decode(concat(tail)), bytes: total, truncated: false }
      const tailBuffer = concat(tail)
      const tailText = decoder.decode(tailBuffer.subarray(Math.max(0, tailBuffer.byteLength - tailCap)))
      const omitted = total - headBytes - Math.min(tailBuffer.byteLength, tailCap)
      return { text: `${headText}\n[… ${omitted} bytes omitted …]\n${tailText}`, bytes: total, truncated: true }
    },
  }
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const length = chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0)
  const joined = new Uint8Array(length)
  let offset = 0
  for (const chunk of chunks) {
    joined.set(chunk, offset)
    offset += chunk.byteLength
  }
  return joined
}
