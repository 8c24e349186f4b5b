import { ToolError } from '../../core/errors'

// marked recurses once per nesting level and rescans delimiter runs: a few KB of `>>>>…` or of
// two-space-indented list items overflow its stack or hold the event loop for seconds (measured:
// 1,000 nested list levels blocked the service 8 s; 5,000 quote levels overflowed). Real documents
// nest a handful of levels; these bounds leave ample room and keep every parse short.
const maxNesting = 64
const maxDelimiterRun = 256

/**
 * Refuses Markdown nested deeper than any document needs (quotes plus list indentation, outside code
 * fences) or with an enormous run of one emphasis delimiter, before marked sees it. One linear pass.
 */
export function assertMarkdownNesting(markdown: string, field = 'content'): void {
  let fence: string | undefined
  for (const line of markdown.split('\n')) {
    const fenceMark = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1]
    if (fenceMark) {
      if (fence === undefined) fence = fenceMark[0]
      else if (fenceMark[0] === fence) fence = undefined
      continue
    }
    if (fence !== undefined) continue
    const quotes = /^(?:[ \t]*>)*/.exec(line)?.[0] ?? ''
    const depth = (quotes.match(/>/g)?.length ?? 0) + indentWidth(line.slice(quotes.length)) / 2
    if (depth > maxNesting) {
      throw new ToolError('validation', `The Markdown nests more than ${maxNesting} levels deep.`, {
        hint: 'Flatten the deepest lists or quotes (fewer leading ">" or less indentation) and send it again.',
        details: { field },
      })
    }
  }
  const run = new RegExp(`([*_~])\\1{${maxDelimiterRun},}`).exec(markdown)
  if (run) {
    throw new ToolError(
      'validation',
      `The Markdown has a run of more than ${maxDelimiterRun} "${run[1]}" characters.`,
      {
        hint: 'Shorten the run, or escape the characters (\\*) if they are meant literally.',
        details: { field },
      },
    )
  }
}

function indentWidth(text: string): number {
  let width = 0
  for (const character of text) {
    if (character === ' ') width++
    else if (character === '\t') width += 4 - (width % 4)
    else break
  }
  return width
}
