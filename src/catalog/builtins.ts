import type { Tool } from '../tools/tool'
import { type BuiltinPlacement, builtinEntry, type CatalogEntry } from './entry'

/**
 * The job tools, as the catalog places them: every key may call them (a key that may start a long call
 * must be able to collect it), they never become jobs themselves (get_job's bounded wait is the point),
 * and the OpenAPI document describes them by the job routes under the same operationIds.
 */
const placements: Readonly<Record<string, BuiltinPlacement>> = {
  get_job: { everyKey: true, runsInline: true, describedBy: 'GET /v1/jobs/{id}' },
  cancel_job: { everyKey: true, runsInline: true, describedBy: 'DELETE /v1/jobs/{id}' },
}

/** The built-in tools as catalog entries, in catalog order. */
export function builtinEntries(tools: readonly Tool[]): CatalogEntry[] {
  return tools.map((tool) => builtinEntry(tool, placements[tool.name]))
}
