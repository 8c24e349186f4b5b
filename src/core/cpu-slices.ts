/**
 * For loops of CPU work on the event loop (edits of a large file, one after another): the loop awaits
 * `pause()` between steps, which gives the event loop back once a slice has run `sliceMs`, so other
 * calls wait at most about one step whatever the number of steps. Portable (setTimeout only), unlike
 * storage's timeSlices for filesystem loops.
 */
export function cpuSlices(sliceMs = 20): { pause(): Promise<void> } {
  let sliceStart = performance.now()
  return {
    async pause() {
      if (performance.now() - sliceStart <= sliceMs) return
      await new Promise((resolve) => setTimeout(resolve, 0))
      sliceStart = performance.now()
    },
  }
}
