import { setImmediate as nextTurn } from 'node:timers/promises'

/**
 * For loops of synchronous filesystem calls on local folders (readdir, lstat): each is a few
 * microseconds of syscall, while its promise form costs several times that in bookkeeping and a
 * thread-pool round trip (lstat of 1,000 files: ~4 ms synchronous against ~17 ms with promises). The
 * loop awaits `pause()` between calls, which gives the event loop back once the slice has run
 * `sliceMs`, so other calls wait at most that long whatever the tree's size.
 */
export function timeSlices(sliceMs = 2): { pause(): Promise<void> } {
  let sliceStart = performance.now()
  return {
    async pause() {
      if (performance.now() - sliceStart <= sliceMs) return
      await nextTurn()
      sliceStart = performance.now()
    },
  }
}
