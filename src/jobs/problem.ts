import { isToolError, nestingError, statusOf, ToolError, titleOf } from '../core/errors'

/** Failures a caller's input or a known outage explains are not logged as errors; the rest are. */
export function isUnexpected(error: unknown): boolean {
  if (isToolError(error)) return error.code === 'internal'
  return nestingError(error) === undefined
}

/** The problem document stored with a failed job: the same members an HTTP error carries. */
export function errorToProblem(error: unknown): Record<string, unknown> {
  const known = isToolError(error)
    ? error
    : (nestingError(error) ?? new ToolError('internal', 'An unexpected error occurred.'))
  return {
    type: `urn:toolport:problem:${known.code}`,
    title: titleOf(known.code),
    status: statusOf(known.code),
    detail: known.message,
    code: known.code,
    hint: known.hint,
    ...known.details,
  }
}
