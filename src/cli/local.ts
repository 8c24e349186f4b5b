import { startNodeService } from '../runtimes/node-service'
import { toolNames } from '../tools/builtins'
import { createTarget, type Target } from './target'

/**
 * The in-process mode: the same app `toolport serve` runs, built from the same TOOLPORT_* settings
 * (storage, sandbox, tools), answering requests without a socket. It runs as the local operator:
 * keys are not asked for, and the app's access log stays quiet so stdout holds only the result.
 */
export async function createLocalTarget(env: Record<string, string | undefined>, tool: string): Promise<Target> {
  // Only the called tool is enabled (unless the operator chose a set): no sandbox start-up for a file read.
  const only = env.TOOLPORT_TOOLS === undefined && toolNames.includes(tool) ? { TOOLPORT_TOOLS: tool } : {}
  const service = await startNodeService({
    ...env,
    ...only,
    TOOLPORT_API_KEYS: undefined,
    TOOLPORT_KEYS_FILE: undefined,
    HOST: '127.0.0.1',
    TOOLPORT_LOG_LEVEL: env.TOOLPORT_LOG_LEVEL ?? 'error',
  })
  const base = service.config.http.publicUrl
  const viaApp = async (url: string, init?: RequestInit) => service.app.request(url, init)
  // Links to this service's own files are answered in process; others (presigned S3 URLs) are fetched.
  return createTarget(base, viaApp, undefined, (url) => (url.startsWith(`${base}/`) ? viaApp(url) : fetch(url)))
}
