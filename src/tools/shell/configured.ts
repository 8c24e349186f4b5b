import type { Tool } from '../tool'
import { executeCommand } from './execute-command'

/**
 * execute_command with the operator's default timeout (TOOLPORT_SHELL_DEFAULT_TIMEOUT_SECONDS) in its
 * schema, so the catalog, the OpenAPI document and /v1/context all state the default that applies.
 */
export function withShellDefaults(tools: readonly Tool[], options: { defaultTimeoutSeconds: number }): Tool[] {
  const seconds = options.defaultTimeoutSeconds
  const current = executeCommand.input.shape.timeout_seconds
  if (current.def.defaultValue === seconds) return [...tools]
  const configured: Tool = {
    ...executeCommand,
    input: executeCommand.input.extend({
      timeout_seconds: current
        .unwrap()
        .default(seconds)
        .describe(`Kill the command after this many seconds (1-3600). Default: ${seconds}.`),
    }),
  }
  return tools.map((tool) => (tool === executeCommand ? configured : tool))
}
