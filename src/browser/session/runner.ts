import { isToolError, ToolError } from '../../core/errors'

export function endedError(id: string, reason: string): ToolError {
  return new ToolError('not_found', `The browser session ${id} has ended: ${reason}.`, {
    hint: 'Open a new session with browser_open.',
    details: { field: 'session_id' },
  })
}

/** Puppeteer's errors for a page, session or browser that went away under a call. */
export function gone(error: unknown): boolean {
  if (!(error instanceof Error)) return false
  if (['TargetCloseError', 'ConnectionClosedError'].includes(error.name)) return true
  return /Target closed|Session closed|Connection closed|frame was detached|Page crashed|No target with given id/i.test(
    error.message,
  )
}

/**
 * Runs a session's actions one at a time (a model's parallel calls would otherwise interleave
 * clicks and snapshots), each under the action deadline, with browser failures turned into errors a
 * model can act on: 504 past the deadline, 404 once the session ended (crashed page, stopped
 * browser), 503 for a page that went away mid-action.
 */
export function createRunner(actionMs: number, ended: () => string | undefined, sessionId: string) {
  let queue: Promise<unknown> = Promise.resolve()
  return function run<T>(work: () => Promise<T>): Promise<T> {
    const turn = queue.then(async () => {
      let timer: ReturnType<typeof setTimeout> | undefined
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new ToolError('timeout', `The browser action took longer than ${actionMs / 1000} s.`, {
                hint: 'The page may still be loading: call browser_snapshot to see where it is.',
              }),
            ),
          actionMs,
        )
      })
      try {
        return await Promise.race([work(), deadline])
      } catch (error) {
        const reason = ended()
        if (reason) throw endedError(sessionId, reason)
        if (isToolError(error)) throw error
        if (error instanceof Error && error.name === 'TimeoutError') {
          throw new ToolError('timeout', `The browser action took longer than ${actionMs / 1000} s.`, {
            hint: 'The page may still be loading: call browser_snapshot to see where it is.',
            cause: error,
          })
        }
        throw new ToolError(
          'unavailable',
          gone(error) ? 'The page went away during the action.' : 'The browser failed during the action.',
          {
            hint: 'Call browser_tabs to see the open tabs, then try again.',
            cause: error,
            headers: { 'Retry-After': '1' },
          },
        )
      } finally {
        clearTimeout(timer)
      }
    })
    queue = turn.catch(() => {})
    return turn
  }
}
