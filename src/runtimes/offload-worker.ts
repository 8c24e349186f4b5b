import { parentPort } from 'node:worker_threads'
import { documentTasks } from '../tools/documents/tasks'
import { carryError, type TaskTable } from '../tools/offload'
import { webTasks } from '../tools/web/tasks'

/**
 * The worker side of createOffloadPool (offload-pool.ts): runs the tools' CPU-heavy tasks off the
 * service's main thread. A worker entry point, so it starts listening when loaded.
 */
const tasks: TaskTable = { ...webTasks, ...documentTasks }

/** Byte arrays in an output move to the main thread instead of being copied. */
function transfers(output: unknown): ArrayBuffer[] {
  if (!output || typeof output !== 'object') return []
  return Object.values(output).flatMap((value) =>
    value instanceof Uint8Array && value.buffer instanceof ArrayBuffer ? [value.buffer] : [],
  )
}

parentPort?.on('message', async ({ id, task, input }: { id: number; task: string; input: unknown }) => {
  try {
    const run = tasks[task]
    if (!run) throw new Error(`no offload task ${task}`)
    const output = await run(input)
    parentPort?.postMessage({ id, output }, transfers(output))
  } catch (error) {
    parentPort?.postMessage({ id, error: carryError(error) })
  }
})
