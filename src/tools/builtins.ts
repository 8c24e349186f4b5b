import { browserTools } from './browser'
import { documentTools } from './documents'
import { fileTools } from './files'
import { jobTools } from './jobs/job-tools'
import { executeCommand } from './shell/execute-command'
import { getEnv, systemInfo } from './system/system-tools'
import type { Tool } from './tool'
import { httpFetch } from './web/http-fetch'
import { screenshot } from './web/screenshot'
import { webFetch } from './web/web-fetch'
import { webSearch } from './web/web-search'

/** The whole catalog, one explicit list: a tool exists only if it is named here. */
export const allTools: readonly Tool[] = [
  ...fileTools,
  executeCommand,
  httpFetch,
  webFetch,
  webSearch,
  screenshot,
  ...browserTools,
  ...documentTools,
  systemInfo,
  getEnv,
  ...jobTools,
]

export const toolNames: readonly string[] = allTools.map((tool) => tool.name)

/**
 * The tools TOOLPORT_TOOLS enables (all when unset), in catalog order. The job tools always come along:
 * any tool call can turn into a job, which a client must be able to collect.
 */
export function selectTools(names: readonly string[] | undefined): Tool[] {
  if (!names) return [...allTools]
  const wanted = new Set(names)
  return allTools.filter((tool) => wanted.has(tool.name) || jobTools.includes(tool))
}
