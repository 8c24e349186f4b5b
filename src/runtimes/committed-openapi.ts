import { createApp } from '../app'
import { loadConfig } from '../config/config'
import { silentLogger } from '../core/logger'
import { createMemoryStorage } from '../storage/memory'
import { toolNames } from '../tools/builtins'

/**
 * The committed openapi/openapi.json: every tool, the default public URL. Rendered from a real app so
 * the file and GET /openapi.json can never describe different things.
 */
export async function renderCommittedOpenApi(): Promise<string> {
  const config = loadConfig({}, { toolNames })
  const { app } = createApp({ config, storage: createMemoryStorage(), log: silentLogger })
  const response = await app.request('/openapi.json')
  return `${JSON.stringify(await response.json(), null, 2)}\n`
}
