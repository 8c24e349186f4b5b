import { parentPort } from 'node:worker_threads'
import { commandNames } from './command-names'

/**
 * The worker side of createWorkerLister (command-lister.ts): finds a command's program names off the
 * service's main thread. A worker entry point, so it starts listening when loaded.
 */
parentPort?.on('message', async ({ id, command }: { id: number; command: string }) => {
  try {
    parentPort?.postMessage({ id, names: await commandNames(command) })
  } catch (error) {
    const { name, message } = error instanceof Error ? error : { name: 'Error', message: String(error) }
    parentPort?.postMessage({ id, error: { name, message } })
  }
})
