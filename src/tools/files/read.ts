import { z } from 'zod'
import { ToolError } from '../../core/errors'
import { normalizeWorkspacePath } from '../../core/paths'
import type { Workspace } from '../../workspace/workspace'
import { defineTool } from '../tool'
import { readLineRangeStreamed } from './read-range'
import { LineNumber, WorkspacePath } from './schemas'
import { countLines, cutToJsonBudget, decodeText, fitsJsonBudget, jsonLength, splitLines } from './text'

// Room kept for the other members of the response next to `content`.
const responseOverhead = 2_000

export const readFile = defineTool({
  name: 'read_file',
  title: 'Read file',
  description:
    'Read a text file from the workspace, whole or only lines start_line..end_line (1-based, inclusive). Long files are cut with truncated: true; read the rest by line range.',
  effect: 'read',
  callTitle: (input) => `Read ${input.path}`,
  input: z.strictObject({
    path: WorkspacePath,
    start_line: LineNumber.optional().describe('First line to return (1-based). Default: 1.'),
    end_line: LineNumber.optional().describe('Last line to return (inclusive). Default: the last line.'),
  }),
  output: z.object({
    path: z.string(),
    content: z.string().describe('The text of the requested lines, with their line endings.'),
    total_lines: z.number().int().describe('Number of lines in the whole file.'),
    start_line: z.number().int().describe('First line returned (0 for an empty file).'),
    end_line: z.number().int().describe('Last line returned (0 when nothing was returned).'),
    truncated: z.boolean().describe('True when content stops before end_line because the response would be too long.'),
    hint: z.string().optional(),
  }),
  async run(input, { workspace, limits }) {
    if (input.start_line !== undefined && input.end_line !== undefined && input.end_line < input.start_line) {
      throw new ToolError('validation', 'end_line is before start_line.', {
        hint: 'Send an end_line greater than or equal to start_line.',
        details: { field: 'end_line' },
      })
    }
    const ranged = input.start_line !== undefined || input.end_line !== undefined
    const file = await workspace.readFile(input.path, limits.maxFileBytes).catch((error: unknown) => {
      // Over the limit, a line range is still served: the limit applies to what is returned (streamedRange).
      if (ranged && error instanceof ToolError && error.code === 'size_exceeded') return undefined
      throw error
    })
    if (!file) return streamedRange(input, workspace, limits)
    const text = decodeText(file.bytes, file.path)
    // Counted, not split: a whole file that fits is answered as it is, without its lines.
    const totalLines = countLines(text)
    const startLine = input.start_line ?? 1
    if (totalLines === 0 && startLine === 1) {
      return { path: file.path, content: '', total_lines: 0, start_line: 0, end_line: 0, truncated: false }
    }
    if (startLine > totalLines) {
      throw new ToolError('validation', `start_line ${startLine} is past the end of the file (${totalLines} lines).`, {
        hint: `Send a start_line between 1 and ${totalLines}.`,
        details: { field: 'start_line', total_lines: totalLines },
      })
    }
    const endLine = Math.min(input.end_line ?? totalLines, totalLines)
    const budget = limits.maxResponseChars - responseOverhead - jsonLength(file.path)
    // The whole file within the budget: the lines below would add up to the text itself (they keep
    // their endings, and JSON escapes each character on its own), so it is measured once.
    if (startLine === 1 && endLine === totalLines && fitsJsonBudget(text, budget)) {
      return {
        path: file.path,
        content: text,
        total_lines: totalLines,
        start_line: 1,
        end_line: totalLines,
        truncated: false,
      }
    }
    const lines = splitLines(text)
    let used = 0
    let lastLine = startLine - 1
    const parts: string[] = []
    for (let lineNumber = startLine; lineNumber <= endLine; lineNumber++) {
      const line = lines[lineNumber - 1] as string
      const size = jsonLength(line)
      if (used + size > budget) {
        // A single line longer than the whole budget is cut inside the line, so something is returned.
        if (parts.length === 0) parts.push(cutToJsonBudget(line, budget))
        break
      }
      parts.push(line)
      used += size
      lastLine = lineNumber
    }
    const truncated = lastLine < endLine
    const returnedEnd = truncated && lastLine < startLine ? startLine : lastLine
    return {
      path: file.path,
      content: parts.join(''),
      total_lines: totalLines,
      start_line: startLine,
      end_line: returnedEnd,
      truncated,
      ...(truncated ? { hint: continuationHint(startLine, lastLine) } : {}),
    }
  },
})

async function streamedRange(
  input: { path: string; start_line?: number | undefined; end_line?: number | undefined },
  workspace: Workspace,
  limits: { maxResponseChars: number; maxFileBytes: number },
) {
  const path = normalizeWorkspacePath(input.path)
  const startLine = input.start_line ?? 1
  // TOOLPORT_MAX_FILE_BYTES still bounds what one read returns: a range of a larger file is served up
  // to it (then cut, with the next range to ask for), never the whole file past it.
  const budget = limits.maxResponseChars - responseOverhead - jsonLength(path)
  const read = await readLineRangeStreamed(
    workspace,
    path,
    { start: startLine, end: input.end_line },
    budget,
    limits.maxFileBytes,
  )
  if (startLine > read.totalLines) {
    throw new ToolError(
      'validation',
      `start_line ${startLine} is past the end of the file (${read.totalLines} lines).`,
      {
        hint: `Send a start_line between 1 and ${read.totalLines}.`,
        details: { field: 'start_line', total_lines: read.totalLines },
      },
    )
  }
  const endLine = Math.min(input.end_line ?? read.totalLines, read.totalLines)
  const lastLine = read.cutLine ? startLine - 1 : startLine + read.lines.length - 1
  const truncated = lastLine < endLine
  return {
    path,
    content: read.lines.join(''),
    total_lines: read.totalLines,
    start_line: startLine,
    end_line: truncated && lastLine < startLine ? startLine : lastLine,
    truncated,
    ...(truncated ? { hint: continuationHint(startLine, lastLine) } : {}),
  }
}

/** What a model calls next to read on from a cut answer (`lastLine` is the last line returned whole). */
function continuationHint(startLine: number, lastLine: number): string {
  return lastLine < startLine
    ? `Line ${startLine} alone is longer than a response may be; only its beginning was returned.`
    : `Output stopped after line ${lastLine}; call read_file with start_line ${lastLine + 1} to continue.`
}
