/**
 * For loops of work on the event loop: the loop awaits `pause()` between steps, which gives the event
 * loop back (`yieldTurn`) once a slice has run `sliceMs`, so other calls wait at most about one step
 * whatever the number of steps. The default turn is setTimeout, which every runtime has.
 */
export function workSlices(
  sliceMs: number,
  yieldTurn: () => Promise<unknown> = () => new Promise((resolve) => setTimeout(resolve, 0)),
): { pause(): Promise<void> } {
  let sliceStart = performance.now()
  return {
    async pause() {
      if (performance.now() - sliceStart <= sliceMs) return
      await yieldTurn()
      sliceStart = performance.now()
    },
  }
}

/** CPU work such as edits of a large file, one after another: 20 ms slices, portable. */
export function cpuSlices(sliceMs = 20): { pause(): Promise<void> } {
  return workSlices(sliceMs)
}
