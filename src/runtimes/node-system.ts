import { statfs } from 'node:fs/promises'
import { arch, availableParallelism, freemem, hostname, release, totalmem, type } from 'node:os'
import type { SystemProbe } from '../tools/services'

/** system_info on Node: the OS as Node sees it, storage of the folder that holds the data. */
export function createNodeSystemProbe(dataDir: string): SystemProbe {
  return async () => {
    const storage = await statfs(dataDir).catch(() => undefined)
    return {
      os: type(),
      os_version: release(),
      arch: arch(),
      hostname: hostname(),
      available_processors: availableParallelism(),
      total_memory_bytes: totalmem(),
      free_memory_bytes: freemem(),
      total_storage_bytes: storage ? storage.blocks * storage.bsize : null,
      free_storage_bytes: storage ? storage.bavail * storage.bsize : null,
      runtime: process.env.AWS_LAMBDA_FUNCTION_NAME ? 'lambda' : 'node',
      runtime_version: process.version,
    }
  }
}
