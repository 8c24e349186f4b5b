import { ToolError } from '../../core/errors'

// marked recurses once per nesting level and rescans delimiter runs: a few KB of `>>>>…` or of
// two-space-indented list items overflow its stack or hold the event loop for seconds (measured:
// 1,000 nested list levels blocked the service 8 s; 5,000 quote levels overflowed). Real documents
// nest a handful of levels; these bounds leave ample room and keep every parse short.
const maxNesting = 64
const maxDelimiterRun = 256
// What may open a container at the start of a line: indentation, then a quote marker, or a list
// marker (a bullet or an ordinal) followed by a space or the end of the line.
const containerMarker = /[ \t]*(?:>|(?:[-*+]|\d{1,9}[.)])(?=[ \t]|$))[ \t]?/y

/**
 * Refuses Markdown nested deeper than any document needs, or with an enormous run of one emphasis
 * delimiter, before marked sees it. One linear pass.
 *
 * Only what nests is measured: quote markers, and the indentation of lines that are list items (an
 * indented line without a marker continues its item or is code; it nests nothing). Fenced code is not
 * skipped: whether a line is inside a fence depends on containers a line scan cannot follow (a fence in
 * a list item ends with the item; a backtick fence whose info string holds a backtick is no fence), and
 * a skip that marked does not make let 1,000 list levels through after one such line.
 */
export function assertMarkdownNesting(markdown: string, field = 'content'): void {
  for (const line of markdown.split('\n')) {
    if (lineDepth(line) > maxNesting) {
      throw new ToolError('validation', `The Markdown nests more than ${maxNesting} levels deep.`, {
        hint: 'Flatten the deepest lists or quotes (fewer leading ">" or list markers, or less indentation) and send it again.',
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

/**
 * How deep a line's containers nest, at most: one level per marker (`> - 1. item` is three), and
 * the indentation of a list item in steps of two (a nested item is indented under its parent).
 * Indentation without a marker after it nests nothing.
 */
function lineDepth(line: string): number {
  let depth = 0
  let indentation = 0
  containerMarker.lastIndex = 0
  for (let at = 0; containerMarker.test(line); at = containerMarker.lastIndex) {
    depth++
    indentation += indentWidth(line.slice(at, containerMarker.lastIndex))
  }
  return depth + indentation / 2
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
