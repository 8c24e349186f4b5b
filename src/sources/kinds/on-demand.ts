/**
 * One thing a source opens on demand and shares between its calls (an MCP connection, a worker
 * process): opened by the first use, kept warm where the runtime allows (stopped after `idleMs` with no
 * use in flight; never, when idleMs is undefined), closed after each use where it does not (Lambda),
 * and opened again once it failed to open or went away on its own.
 */
export interface OnDemand<T> {
  /** The open thing, opened if need be (not counted as a use: no idle timer starts or stops). */
  get(): Promise<T>
  /** Runs `work` with it; the idle timer waits for every use in flight. */
  use<R>(work: (value: T) => Promise<R>): Promise<R>
  close(): Promise<void>
}

export interface OnDemandOptions<T> {
  /** Opens it; `lost` is to be called if it goes away on its own, so that the next use opens another. */
  open(lost: () => void): Promise<T>
  /** Closes it (a close toolport asks for). */
  close(value: T): Promise<void>
  keepWarm: boolean
  idleMs: number | undefined
}

export function onDemand<T>(options: OnDemandOptions<T>): OnDemand<T> {
  let current: Promise<T> | undefined
  let idleTimer: ReturnType<typeof setTimeout> | undefined
  let busy = 0

  const get = () => {
    if (!current) {
      const opening: Promise<T> = options.open(() => {
        if (current === opening) current = undefined
      })
      current = opening
      opening.catch(() => {
        if (current === opening) current = undefined
      })
    }
    return current
  }
  const close = async () => {
    clearTimeout(idleTimer)
    const closing = current
    current = undefined
    await closing?.then(options.close).catch(() => {})
  }
  const scheduleIdle = () => {
    clearTimeout(idleTimer)
    if (options.idleMs === undefined || busy > 0) return
    idleTimer = setTimeout(() => void close(), options.idleMs)
    idleTimer.unref?.()
  }
  return {
    get,
    close,
    async use(work) {
      busy++
      clearTimeout(idleTimer)
      try {
        return await work(await get())
      } finally {
        busy--
        if (!options.keepWarm) await close()
        else scheduleIdle()
      }
    },
  }
}
