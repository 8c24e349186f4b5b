import { ToolError } from '../core/errors'

/**
 * Runs `run` with a controller that aborts when `abort` does (with its reason) or when the deadline
 * passes (a TimeoutError). `abort` is the caller's signal, or a controller made for this call alone,
 * which the deadline then aborts itself: no second controller forwarding it, and its signal is made
 * only if the tool reads it. One timer, cleared when the call ends: no AbortSignal.any and no timer
 * left behind per finished call, which a busy server pays for on every call. The tool sees the
 * aborted signal, but a tool that ignores it must not hold the call: the answer is 504 at the
 * deadline whatever the tool does (its late result or error is dropped).
 */
export async function runWithDeadline<T>(
  deadlineMs: number,
  abort: AbortSignal | AbortController,
  run: (controller: AbortController) => Promise<T>,
): Promise<T> {
  const outer = abort instanceof AbortController ? undefined : abort
  const controller = abort instanceof AbortController ? abort : new AbortController()
  const forward = () => controller.abort(outer?.reason)
  if (outer?.aborted) forward()
  else outer?.addEventListener('abort', forward, { once: true })
  let timer: ReturnType<typeof setTimeout> | undefined
  try {
    // One promise settled by whichever comes first (no Promise.race and its two promises per call):
    // the timeout is rejected before the abort, so it answers timeout even when the tool fails at
    // once on the abort; the tool's late result or error is then ignored.
    return await new Promise<T>((resolve, reject) => {
      timer = setTimeout(() => {
        reject(
          new ToolError('timeout', `The call did not finish within its ${Math.round(deadlineMs / 1000)} s deadline.`, {
            hint: 'Call with ?async=true to run it as a job and poll status_url, or split the work into smaller calls.',
            details: { limit_seconds: deadlineMs / 1000 },
          }),
        )
        controller.abort(new DOMException('The call deadline passed.', 'TimeoutError'))
      }, deadlineMs)
      Promise.resolve(run(controller)).then(resolve, reject)
    })
  } finally {
    clearTimeout(timer)
    outer?.removeEventListener('abort', forward)
  }
}
