import { z } from 'zod'
import {
  Command,
  Effect,
  Headers,
  IdleSeconds,
  Image,
  Mounts,
  maxToolsPerSource,
  SecretName,
  SecretValue,
  SourceDescription,
  SourceId,
  TimeoutSeconds,
} from '../declared'

/** `mcp`: an MCP server at a Streamable HTTP `url`, or started from `command` inside the sandbox (stdio). */
export const McpManifest = z
  .strictObject({
    id: SourceId,
    kind: z.literal('mcp'),
    description: SourceDescription.optional(),
    url: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .optional(),
    headers: Headers.optional(),
    /** argv of a stdio server, run in the sandbox with no network. */
    command: Command.optional(),
    env: z.record(SecretName, SecretValue).optional(),
    /** Container image for the stdio server (container executor only). */
    image: Image.optional(),
    /** Host folders the stdio server sees read-only (operator sources only), e.g. its installed code. */
    mounts: Mounts.optional(),
    /** Only these of the server's tools (by the server's names). */
    tools: z.array(z.string().min(1).max(128)).min(1).max(maxToolsPerSource).optional(),
    /** Effect per tool (server's name), instead of the one its annotations imply. */
    effects: z.record(z.string().min(1).max(128), Effect).optional(),
    timeout_seconds: TimeoutSeconds.default(60),
    /** A stdio server idle this long is stopped, and started again by the next call. */
    idle_seconds: IdleSeconds.default(300),
  })
  .refine((manifest) => (manifest.url === undefined) !== (manifest.command === undefined), {
    message: 'give either url (a Streamable HTTP server) or command (a stdio server), not both',
    path: ['url'],
  })
export type McpManifest = z.output<typeof McpManifest>

// Initialize and tools/list must not hold a source in "loading" for long.
export const connectTimeoutMs = 15_000

/** A source's own timeout bounds its connect too, when it is shorter. */
export function connectTimeoutOf(manifest: McpManifest): number {
  return Math.min(connectTimeoutMs, manifest.timeout_seconds * 1000)
}
