import { type CatalogEntry, sourceEntry } from '../../catalog/entry'
import { isToolError, ToolError } from '../../core/errors'
import { inSpan } from '../../core/tracing'
import { defineTool } from '../../tools/tool'
import type { SourceKind } from '../types'
import { declaredSchemas } from './declared-schemas'
import { jsonRpcResult } from './http'
import type { WorkerManifest } from './worker-manifest'
import { createWorkerConnection, type StagedFile, type WorkerConnection } from './worker-process'

/**
 * `worker`: each tool calls one JSON-RPC method of the source's worker process with its validated
 * input (the manifest is in worker-manifest.ts, the process in worker-process.ts). A file-class
 * field (`file_inputs`, or as reference 002 names them) holds a workspace path: the file is read with
 * read_file's checks and handed to the worker, which gets its path inside the sandbox.
 */
export const workerKind: SourceKind<WorkerManifest> = {
  kind: 'worker',
  async load(manifest, context) {
    // No tools: nothing would ever call the worker, so it is not started (supports_ai false).
    if (manifest.tools.length === 0) return { tools: [] }
    if (!context.processes) throw new Error('this runtime cannot start workers (no sandbox)')
    const connection = createWorkerConnection(manifest, context)
    return {
      tools: manifest.tools.map((declared) => workerTool(manifest, declared, connection)),
      close: () => connection.close(),
      note: () => {
        const note = connection.note()
        return note ? `its worker last stopped${note}` : undefined
      },
      onNote: (listener) => connection.onStopped(listener),
    }
  },
}

type DeclaredWorkerTool = WorkerManifest['tools'][number]

function workerTool(
  manifest: WorkerManifest,
  declared: DeclaredWorkerTool,
  connection: WorkerConnection,
): CatalogEntry {
  const schemas = declaredSchemas(declared)
  const method = declared.method ?? declared.name
  const fileFields = declared.file_inputs ?? fileClassFields(declared.input_schema)
  const timeoutMs = manifest.timeout_seconds * 1000
  const tool = defineTool({
    name: declared.name,
    title: declared.title ?? declared.name,
    description: declared.description,
    effect: declared.effect,
    input: schemas.input.validator,
    output: schemas.output.validator,
    deadlineMs: () => timeoutMs + 5_000,
    async run(input, tool) {
      const params = input as Record<string, unknown>
      const files: StagedFile[] = []
      const fields: string[] = []
      for (const field of fileFields) {
        const path = params[field]
        if (typeof path !== 'string') continue
        const file = await tool.workspace.readFile(path, tool.limits.maxFileBytes)
        files.push({ name: file.path.split('/').pop() ?? 'file', bytes: file.bytes })
        fields.push(field)
      }
      const answer = await inSpan(
        tool.span,
        `source ${manifest.id}`,
        { 'toolport.source': manifest.id, 'rpc.method': method },
        () =>
          connection.invoke(
            method,
            files,
            (paths) => ({ ...params, ...Object.fromEntries(fields.map((field, index) => [field, paths[index]])) }),
            { signal: tool.signal, timeoutMs },
          ),
        'client',
      ).catch((error: unknown) => {
        throw workerFailure(error, manifest.id, declared.name)
      })
      const value = jsonRpcResult({ jsonrpc: '2.0', ...answer }, manifest.id, declared.name)
      return schemas.check(value, tool.limits.maxResponseChars)
    },
    async dryRun(input) {
      return { worker: manifest.command.join(' '), method, params: input }
    },
  })
  return sourceEntry(manifest.id, tool, {
    schemas: { input: schemas.input.published, output: schemas.output.published },
  })
}

/** A worker that stopped, broke the protocol or could not start, as the 502 a caller sees (a timeout stays 504). */
function workerFailure(error: unknown, source: string, tool: string): ToolError {
  if (isToolError(error)) return error
  const message = error instanceof Error ? error.message : String(error)
  return new ToolError('connection', `${tool} (worker of ${source}) failed: ${message.slice(0, 800)}`, {
    hint: 'The worker stopped or misbehaved; it is started again for the next call. Tell the operator if it persists.',
    details: { source },
  })
}

/**
 * The fields of an input schema that name a file, as reference 002's host finds them to inject a
 * FileRef: top-level string properties called `filePath`, `file_path` or `…FilePath`/`…_file_path`,
 * or described as a FileRef. A worker tool's `file_inputs` names them instead.
 */
export function fileClassFields(schema: Record<string, unknown>): string[] {
  const properties = (schema.properties ?? {}) as Record<string, { type?: unknown; description?: unknown }>
  return Object.entries(properties)
    .filter(([name, property]) => {
      if (property?.type !== 'string') return false
      const named = /^file_?path$|FilePath$|_file_path$/i.test(name)
      const described = typeof property.description === 'string' && /\bFileRef\b/.test(property.description)
      return named || described
    })
    .map(([name]) => name)
}
