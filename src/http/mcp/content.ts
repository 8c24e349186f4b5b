import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import { workspaceUri } from './resource-uris'

/**
 * Protocol versions by what their results may carry. resource_link blocks and structuredContent came
 * with 2025-06-18: a client that negotiated 2025-03-26 refuses the first (the SDK of that era throws
 * on it) and cannot use the second, so it gets the same links as text.
 */
export function supportsResourceLinks(version: string): boolean {
  return version >= '2025-06-18'
}

const InlineImage = z.object({ mime_type: z.string(), data: z.string() })

const FileList = z.array(
  z.object({
    url: z.string(),
    name: z.string(),
    path: z.string().optional(),
    mime_type: z.string().optional(),
    size: z.number().optional(),
    expires_at: z.string().optional(),
  }),
)

/**
 * A tool's output as an MCP result for the negotiated version: the structured content (what the REST
 * call answers), a JSON text block of it, the picture of an `image` field as an image block (REST keeps
 * only the link), and the files it made as links the client can fetch.
 */
export function resultOf(output: unknown, version: string, workspace: string): CallToolResult {
  const { image, ...rest } = output as Record<string, unknown>
  // Checked only where there is one: a failed parse builds its error, a cost every call would pay.
  const picture = image === undefined ? undefined : InlineImage.safeParse(image)
  const structured = picture?.success ? rest : (output as Record<string, unknown>)
  const images: ContentBlock[] = picture?.success
    ? [{ type: 'image', data: picture.data.data, mimeType: picture.data.mime_type }]
    : []
  return {
    structuredContent: structured,
    content: [
      { type: 'text', text: JSON.stringify(structured) },
      ...images,
      ...fileBlocks(structured, version, workspace),
    ],
  }
}

/**
 * Files a tool made become resource links; for clients before 2025-06-18, a text block with the links.
 * A workspace file's link is its resource URI, which resources/read answers with the same checks as
 * read_file (surface.ts); its download link, which needs no MCP, is in the description.
 */
function fileBlocks(output: unknown, version: string, workspace: string): ContentBlock[] {
  const listed = (output as { files?: unknown } | null)?.files
  if (listed === undefined) return []
  const files = FileList.safeParse(listed)
  if (!files.success || files.data.length === 0) return []
  if (!supportsResourceLinks(version)) {
    // The resource URI too, which resources/read answers at every version.
    const lines = files.data.map((file) =>
      file.path
        ? `${file.name}: ${workspaceUri(workspace, file.path)} (download: ${file.url})`
        : `${file.name}: ${file.url}`,
    )
    return [{ type: 'text', text: `Files (resources, with download links):\n${lines.join('\n')}` }]
  }
  return files.data.map((file) => ({
    type: 'resource_link',
    uri: file.path ? workspaceUri(workspace, file.path) : file.url,
    name: file.name,
    ...(file.path
      ? { description: `Download: ${file.url}${file.expires_at ? ` (until ${file.expires_at})` : ''}` }
      : {}),
    ...(file.mime_type ? { mimeType: file.mime_type } : {}),
    ...(file.size !== undefined ? { size: file.size } : {}),
  }))
}

/**
 * The result of a call that outlived the synchronous limit and went on as a job. It is marked isError
 * only because MCP requires a tool with an outputSchema to answer structured content matching it,
 * which a call still running cannot: the text says plainly that nothing failed and what to call next.
 */
export function handedOver(job: { job_id: string; tool: string; status_url: string; hint: string }): CallToolResult {
  return {
    isError: true,
    content: [
      {
        type: 'text',
        text: `Not an error: ${job.tool} is taking longer than this request may wait, so it goes on running as job ${job.job_id} and was not stopped. ${job.hint}`,
      },
      { type: 'text', text: JSON.stringify({ status: 'running', job_id: job.job_id, status_url: job.status_url }) },
    ],
  }
}
