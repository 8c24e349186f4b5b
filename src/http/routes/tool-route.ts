import { createRoute, z } from '@hono/zod-openapi'
import type { Tool } from '../../tools/tool'
import { PendingApproval } from '../approval-schemas'
import { problemContent } from '../problem'
import { WorkspaceId } from '../workspace-param'
import { Job } from './jobs'

// The declaration of POST /v1/tools/{name}: its query flags (checked on every call) and its OpenAPI
// operation, generated from the tool's own schemas (zod for built-ins, JSON Schema for source tools).

/** A query flag: the text "true" or "false" on the wire, a boolean to every client generated from the document. */
function flag() {
  return z.enum(['true', 'false']).transform((value) => value === 'true')
}

const AsyncFlag = flag()
  .optional()
  .openapi({
    type: 'boolean',
    param: { name: 'async', in: 'query' },
    description: 'true: answer 202 at once with a job to poll (GET /v1/jobs/{id}) instead of waiting for the result.',
  })

const CallbackUrl = z
  .url({ protocol: /^https?$/ })
  .max(2048)
  .optional()
  .openapi({
    param: { name: 'callback_url', in: 'query' },
    description: 'With a job: POST the finished job here, signed with X-Toolport-Signature (see the README).',
  })

const DryRunFlag = flag()
  .optional()
  .openapi({
    type: 'boolean',
    param: { name: 'dry_run', in: 'query' },
    description:
      "true: change and send nothing and return { dry_run: true, preview }: what the call would do (a unified diff, what would be deleted, the command's policy verdict and working directory, the request and address verdict, the output path and page setup). A call that would be refused answers that refusal instead; a preview past the response limit is cut, with truncated: true and a hint.",
  })

function errorResponses(tool: Tool) {
  const responses: Record<number, { description: string; content: typeof problemContent }> = {
    400: { description: 'Invalid input: the problem names the field and gives a hint.', content: problemContent },
    401: { description: 'Missing or invalid bearer key.', content: problemContent },
    403: { description: 'The key may not call this tool, or the operation is not allowed.', content: problemContent },
    413: { description: 'The body or a file is larger than allowed.', content: problemContent },
    415: { description: 'The body is not JSON.', content: problemContent },
    429: {
      description:
        'Too many calls (rate limit) or a full queue (sandbox, browser, workers): retry after Retry-After seconds.',
      content: problemContent,
    },
    500: { description: 'Unexpected server error.', content: problemContent },
    502: {
      description:
        'An upstream failed: a URL or worker could not be reached or answered wrongly; the detail says which.',
      content: problemContent,
    },
    503: { description: 'A backing service (storage) is unavailable; retry later.', content: problemContent },
    504: {
      description: 'The call did not finish within its deadline; call with ?async=true to run it as a job.',
      content: problemContent,
    },
  }
  responses[404] = { description: 'The file, folder or text to work on does not exist.', content: problemContent }
  if (tool.effect !== 'read') {
    responses[409] = { description: 'The target is in a conflicting state.', content: problemContent }
  }
  return responses
}

/**
 * What ?dry_run=true answers for this tool: its preview (declared with its dry run), or, when the
 * preview was cut to the response limit, the text that fits with truncated and a hint.
 */
export function dryRunResult(tool: Tool) {
  const preview = tool.preview ?? z.unknown()
  const cut = z.string().describe('The preview cut to the response limit (its JSON text, unless it is text).')
  return z.object({
    dry_run: z.literal(true),
    preview: preview instanceof z.ZodString ? preview : z.union([preview, cut]),
    truncated: z.literal(true).optional().describe('Set when the preview was cut to the response limit.'),
    hint: z.string().optional().describe('With truncated: how to see the whole change.'),
  })
}

/** The JSON Schema of a source tool's dry-run answer, whose preview the source does not declare. */
const sourceDryRun = {
  type: 'object',
  properties: {
    dry_run: { type: 'boolean', const: true },
    preview: {},
    truncated: { type: 'boolean', const: true },
    hint: { type: 'string' },
  },
  required: ['dry_run', 'preview'],
}

/** The 200 of a tool: its output, or for a tool with a dry run also the dry-run answer. */
function okSchema(tool: Tool, schemas?: { output: Record<string, unknown> }) {
  if (schemas) return tool.dryRun ? { anyOf: [schemas.output, sourceDryRun] } : schemas.output
  return tool.dryRun ? z.union([tool.output, dryRunResult(tool)]) : tool.output
}

/** The query of every tool call. */
export const ToolQuery = z.object({
  workspace: WorkspaceId,
  async: AsyncFlag,
  callback_url: CallbackUrl,
  dry_run: DryRunFlag,
})

/**
 * The OpenAPI operation of one tool. `schemas` are the JSON Schemas of a source tool, used as they
 * are; built-ins are described from their zod schemas.
 */
export function toolRoute(tool: Tool, schemas?: { input: Record<string, unknown>; output: Record<string, unknown> }) {
  return createRoute({
    method: 'post',
    path: `/v1/tools/${tool.name}`,
    operationId: tool.name,
    summary: tool.title,
    description: tool.description,
    tags: ['tools'],
    security: [{ bearerAuth: [] }],
    request: {
      query: z.object({
        workspace: WorkspaceId,
        async: AsyncFlag,
        callback_url: CallbackUrl,
        ...(tool.dryRun ? { dry_run: DryRunFlag } : {}),
      }),
      body: { required: true, content: { 'application/json': { schema: schemas?.input ?? tool.input } } },
    },
    responses: {
      200: {
        description: tool.dryRun
          ? `${tool.title}: result; with dry_run=true, { dry_run: true, preview }.`
          : `${tool.title}: result.`,
        content: { 'application/json': { schema: okSchema(tool, schemas) as never } },
      },
      202: {
        description:
          'Accepted as a job (async=true, or the call outlasted the synchronous limit): poll status_url. For a key whose calls of this tool need approval: a PendingApproval with approval_id, approve_url and preview.',
        content: { 'application/json': { schema: z.union([Job, PendingApproval]) } },
      },
      ...errorResponses(tool),
    },
  })
}
