import { z } from 'zod'
import {
  Command,
  checkDeclaredTools,
  DeclaredTool,
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

/**
 * `worker`: a local program spoken to with JSON-RPC 2.0 over stdin and stdout, one message per line
 * (reference 002's plugin worker, `PluginProcessManager.invoke(pluginId, method, params)`), started in
 * the sandbox like a stdio MCP server: the same limits, no network unless egress opens it, kept warm
 * with an idle timeout, started again after it dies. Each tool calls one method with its input.
 */
export const WorkerManifest = z.strictObject({
  id: SourceId,
  kind: z.literal('worker'),
  description: SourceDescription.optional(),
  command: Command,
  env: z.record(SecretName, SecretValue).optional(),
  image: Image.optional(),
  /** Operator sources only: its code, a plugin's folder. */
  mounts: Mounts.optional(),
  timeout_seconds: TimeoutSeconds.default(60),
  idle_seconds: IdleSeconds.default(300),
  /** No tools is a valid worker (a plugin with no AI tools: supports_ai false). */
  tools: z
    .array(
      DeclaredTool.extend({
        /** The JSON-RPC method the tool calls (default: its name). */
        method: z.string().min(1).max(256).optional(),
        /** Input fields holding a workspace path, handed to the worker as a file (default: worker.ts fileClassFields). */
        file_inputs: z.array(z.string().min(1).max(128)).max(16).optional(),
      }),
    )
    .max(maxToolsPerSource)
    .superRefine(checkDeclaredTools),
})
export type WorkerManifest = z.output<typeof WorkerManifest>
