import { ToolError } from '../core/errors'
import type { JobStore } from './job-store'

/** A job running in this process: what aborts it, and the tenant it is stored under. */
export interface RunningJob {
  controller: AbortController
  tenant: string
  /** The attempt this process runs (absent: 1). */
  attempt?: number | undefined
}

/**
 * The jobs running in this process, by id. Heartbeats mark them alive for other instances, and pick up
 * cancels made elsewhere. The timer runs only while this instance has jobs running, so an idle service
 * holds no timers.
 */
export interface Heartbeats {
  readonly running: ReadonlyMap<string, RunningJob>
  watch(id: string, entry: RunningJob): void
  unwatch(id: string): void
  /** The heartbeat under way, if any: a job's outcome must be stored after it lands, not before. */
  beating(): Promise<void> | undefined
  /** Clears the timer for good: the runner is stopping. */
  stop(): void
}

export function createHeartbeats(store: JobStore, intervalMs: number): Heartbeats {
  const running = new Map<string, RunningJob>()
  const now = () => new Date().toISOString()
  let heartbeat: ReturnType<typeof setInterval> | undefined
  let beating: Promise<void> | undefined
  async function beat() {
    for (const [id, { controller, tenant, attempt = 1 }] of running) {
      // Finished meanwhile (track() waits for this beat before it stores the outcome): nothing to write.
      // Nor when the job is another attempt's now (the engine took this instance for dead).
      const mine = (job: { attempt?: number | undefined }) => (job.attempt ?? 1) === attempt
      const job = await store
        .update(tenant, id, (current) =>
          current?.status === 'running' && mine(current) && running.has(id)
            ? { ...current, heartbeat_at: now() }
            : undefined,
        )
        .catch(() => undefined)
      if (job?.status === 'cancelled') controller.abort(new ToolError('conflict', 'The job was cancelled.'))
      else if (job && !mine(job)) {
        controller.abort(new ToolError('conflict', 'The job was taken over by another instance.'))
      }
    }
  }
  function watch(id: string, entry: RunningJob) {
    running.set(id, entry)
    heartbeat ??= setInterval(() => {
      beating ??= beat()
        .catch(() => {})
        .finally(() => {
          beating = undefined
        })
    }, intervalMs)
  }
  function unwatch(id: string) {
    running.delete(id)
    if (running.size === 0 && heartbeat) {
      clearInterval(heartbeat)
      heartbeat = undefined
    }
  }
  return {
    running,
    watch,
    unwatch,
    beating: () => beating,
    stop() {
      if (heartbeat) clearInterval(heartbeat)
    },
  }
}
