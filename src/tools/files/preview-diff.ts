import { createTwoFilesPatch, formatPatch, type StructuredPatchHunk } from 'diff'
import { lineBreaks, splitLines } from './text'

/**
 * The unified diff a dry run shows. Myers' diff (jsdiff) costs time in proportion to the file's lines
 * times the number of changed lines: 10,000 lines all changed took 14 s of the event loop. Past
 * maxEditLength changed lines (or the time backstop) jsdiff gives up, and the preview becomes one hunk
 * from the first to the last changed line: still a patch that turns `before` into `after`, found in one
 * linear pass, only not the smallest one.
 */
const maxEditLength = 1000
const backstopMs = 250
// Past this many lines on the two sides together Myers' diff is not tried: reading a million lines
// into its tokens alone held the event loop for seconds, before its own time backstop applies.
const maxDiffedLines = 50_000
// As many unchanged lines around a change as jsdiff's own hunks show.
const contextLines = 4

/**
 * `maxChars`: the preview is cut to the response limit anyway, so the one-hunk diff stops adding lines
 * past this size (its header still counts the whole change) instead of building megabytes to drop.
 */
export function unifiedDiff(
  path: string,
  before: string,
  after: string,
  created = false,
  maxChars = Number.POSITIVE_INFINITY,
): string {
  const oldName = created ? '/dev/null' : `a/${path}`
  const newName = `b/${path}`
  const diffed =
    lineBreaks(before, maxDiffedLines) + lineBreaks(after, maxDiffedLines) <= maxDiffedLines
      ? createTwoFilesPatch(oldName, newName, before, after, '', '', { maxEditLength, timeout: backstopMs })
      : undefined
  return diffed ?? wholeChangeDiff(oldName, newName, before, after, maxChars)
}

/** One hunk replacing everything between the common first and last lines. */
export function wholeChangeDiff(
  oldName: string,
  newName: string,
  before: string,
  after: string,
  maxChars = Number.POSITIVE_INFINITY,
): string {
  const oldLines = splitLines(before)
  const newLines = splitLines(after)
  let start = 0
  while (start < oldLines.length && start < newLines.length && oldLines[start] === newLines[start]) start++
  let oldEnd = oldLines.length
  let newEnd = newLines.length
  while (oldEnd > start && newEnd > start && oldLines[oldEnd - 1] === newLines[newEnd - 1]) {
    oldEnd--
    newEnd--
  }
  const hunks: StructuredPatchHunk[] = []
  if (start < oldEnd || start < newEnd) {
    const from = Math.max(0, start - contextLines)
    const trailing = Math.min(oldLines.length - oldEnd, contextLines)
    const lines: string[] = []
    let size = 0
    const add = (prefix: string, line: string) => {
      if (size > maxChars) return
      const ended = line.endsWith('\n')
      lines.push(prefix + (ended ? line.slice(0, -1) : line))
      size += line.length + 1
      if (!ended) lines.push('\\ No newline at end of file')
    }
    for (let index = from; index < start; index++) add(' ', oldLines[index] as string)
    for (let index = start; index < oldEnd; index++) add('-', oldLines[index] as string)
    for (let index = start; index < newEnd; index++) add('+', newLines[index] as string)
    for (let index = oldEnd; index < oldEnd + trailing; index++) add(' ', oldLines[index] as string)
    const oldCount = oldEnd + trailing - from
    const newCount = newEnd + trailing - from
    // formatPatch writes an empty range as starting on the line before it, as diff -u does.
    hunks.push({ oldStart: from + 1, oldLines: oldCount, newStart: from + 1, newLines: newCount, lines })
  }
  return formatPatch({ oldFileName: oldName, newFileName: newName, oldHeader: '', newHeader: '', hunks })
}
