import { z } from 'zod'
import { ToolError } from '../../core/errors'
import { fileOutput, type HandoffContext, saveOutputFile } from '../../downloads/handoff'
import { GeneratedFile } from '../../downloads/schemas'
import type { AnyZodObject } from '../../tools/tool'
import { excerpt } from '../upstream'

/** What a source MCP tool without an outputSchema answers: its text, and the files and links it gave. */
export const McpTextOutput = z.object({
  content: z.string().describe('The text the tool answered (its text content blocks, in order).'),
  truncated: z.boolean().describe('True when the text was cut to keep the response within its limit.'),
  files: z
    .array(GeneratedFile)
    .optional()
    .describe('Images and embedded resources it returned, saved in the workspace.'),
  openaiFileResponse: z.array(z.string()).optional(),
  links: z
    .array(z.object({ uri: z.string(), name: z.string(), mime_type: z.string().optional() }))
    .optional()
    .describe('Resources it pointed to (resource links), not fetched.'),
}) as unknown as AnyZodObject

export const mcpTextOutputSchema = z.toJSONSchema(McpTextOutput, { io: 'output' }) as Record<string, unknown>

interface CallResult {
  content?: unknown
  structuredContent?: unknown
  isError?: unknown
}

const Block = z.union([
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('image'), data: z.string(), mimeType: z.string() }),
  z.object({ type: z.literal('audio'), data: z.string(), mimeType: z.string() }),
  z.object({ type: z.literal('resource_link'), uri: z.string(), name: z.string(), mimeType: z.string().optional() }),
  z.object({
    type: z.literal('resource'),
    resource: z.object({
      uri: z.string(),
      mimeType: z.string().optional(),
      text: z.string().optional(),
      blob: z.string().optional(),
    }),
  }),
])

/** Most files one call saves: a server that returns a thousand images must not fill the workspace. */
const maxFilesPerCall = 20

/** An MCP tool result with isError: the tool's own failure, told to the model as a problem it can read. */
export function failedCall(result: CallResult, source: string, tool: string): ToolError {
  const text = blocksOf(result)
    .flatMap((block) => (block.type === 'text' ? [block.text] : []))
    .join('\n')
  return new ToolError('connection', `${tool} reported an error: ${excerpt(text) || '(no message)'}`, {
    hint: 'Read the message: fix the input and call again, or try later if the upstream is failing.',
    details: { source },
  })
}

/**
 * A successful result as a source tool's output without an outputSchema: text joined and cut to the
 * response budget, images and embedded resources saved as workspace files with links (unless the
 * client gets the server's own result, blocks and all: then nothing is written to the workspace).
 */
export async function textOutputOf(
  result: CallResult,
  context: HandoffContext & { limits: { maxResponseChars: number } },
  options: { saveFiles: boolean } = { saveFiles: true },
): Promise<Record<string, unknown>> {
  const blocks = blocksOf(result)
  const texts: string[] = []
  const links: Array<{ uri: string; name: string; mime_type?: string }> = []
  const saved: GeneratedFile[] = []
  for (const block of blocks) {
    if (block.type === 'text') texts.push(block.text)
    else if (block.type === 'resource_link') {
      links.push({ uri: block.uri, name: block.name, ...(block.mimeType ? { mime_type: block.mimeType } : {}) })
    } else if (options.saveFiles && saved.length < maxFilesPerCall) {
      const file = fileOf(block)
      if (file.text !== undefined && file.binary === undefined) texts.push(file.text)
      if (file.binary) saved.push(await saveOutputFile(context, { outputPath: undefined, ...file, bytes: file.binary }))
    }
  }
  const text = texts.join('\n\n')
  // Room for the file records and the JSON around the text.
  const budget = Math.max(0, context.limits.maxResponseChars - 2_000 - JSON.stringify({ saved, links }).length)
  const truncated = JSON.stringify(text).length > budget
  return {
    content: truncated ? cutToJsonLength(text, budget) : text,
    truncated,
    ...(saved.length ? fileOutput(saved) : {}),
    ...(links.length ? { links } : {}),
  }
}

function blocksOf(result: CallResult): Array<z.infer<typeof Block>> {
  const content = Array.isArray(result.content) ? result.content : []
  return content.flatMap((block) => {
    const parsed = Block.safeParse(block)
    return parsed.success ? [parsed.data] : []
  })
}

function fileOf(block: z.infer<typeof Block>): {
  suggestedName: string
  extension: string
  binary?: Uint8Array
  text?: string
} {
  if (block.type === 'image' || block.type === 'audio') {
    return { suggestedName: block.type, extension: extensionFor(block.mimeType, ''), binary: decodeBase64(block.data) }
  }
  if (block.type !== 'resource') return { suggestedName: 'resource', extension: 'bin' }
  const { resource } = block
  const name = resource.uri.split(/[/?#]/).filter(Boolean).at(-1) ?? 'resource'
  const extension = extensionFor(resource.mimeType, name)
  const suggestedName = name.replace(/\.[^.]*$/, '') || 'resource'
  if (resource.blob !== undefined) return { suggestedName, extension, binary: decodeBase64(resource.blob) }
  return { suggestedName, extension, binary: new TextEncoder().encode(resource.text ?? '') }
}

const extensions: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/svg+xml': 'svg',
  'audio/mpeg': 'mp3',
  'audio/wav': 'wav',
  'application/pdf': 'pdf',
  'application/json': 'json',
  'text/plain': 'txt',
  'text/markdown': 'md',
  'text/csv': 'csv',
  'text/html': 'html',
}

function extensionFor(mimeType: string | undefined, name: string): string {
  const known = mimeType ? extensions[mimeType.split(';')[0]?.trim().toLowerCase() ?? ''] : undefined
  if (known) return known
  const fromName = /\.([A-Za-z0-9]{1,5})$/.exec(name)?.[1]?.toLowerCase()
  return fromName ?? 'bin'
}

function decodeBase64(data: string): Uint8Array {
  try {
    return Uint8Array.from(atob(data.replace(/\s+/g, '')), (char) => char.charCodeAt(0))
  } catch {
    throw new ToolError('connection', 'An MCP tool answered with a file whose base64 data is invalid.', {
      hint: 'The upstream server is broken; tell the operator.',
    })
  }
}

/** The longest prefix of text whose JSON string is at most `budget` characters. */
function cutToJsonLength(text: string, budget: number): string {
  let low = 0
  let high = Math.min(text.length, budget)
  while (low < high) {
    const middle = Math.ceil((low + high) / 2)
    if (JSON.stringify(text.slice(0, middle)).length <= budget) low = middle
    else high = middle - 1
  }
  return text.slice(0, low)
}
