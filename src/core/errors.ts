/**
 * The one error type of toolport. Every failure a caller can see is a ToolError with a code;
 * the HTTP layer maps the code to a status exactly once (statusOf), so status and code never disagree.
 */
export const errorCodes = [
  'validation',
  'unauthenticated',
  'not_found',
  'method_not_allowed',
  'permission_denied',
  'conflict',
  'timeout',
  'size_exceeded',
  'connection',
  'unavailable',
  'rate_limited',
  'unsupported_media_type',
  'internal',
] as const

export type ErrorCode = (typeof errorCodes)[number]

const statusByCode: Record<ErrorCode, number> = {
  validation: 400,
  unauthenticated: 401,
  permission_denied: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  size_exceeded: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  connection: 502,
  unavailable: 503,
  timeout: 504,
}

const titleByCode: Record<ErrorCode, string> = {
  validation: 'Invalid input',
  unauthenticated: 'Authentication required',
  permission_denied: 'Permission denied',
  not_found: 'Not found',
  method_not_allowed: 'Method not allowed',
  conflict: 'Conflict',
  size_exceeded: 'Size limit exceeded',
  unsupported_media_type: 'Unsupported media type',
  rate_limited: 'Too many requests',
  internal: 'Internal error',
  connection: 'Connection failed',
  unavailable: 'Service unavailable',
  timeout: 'Timed out',
}

const defaultHintByCode: Record<ErrorCode, string> = {
  validation: 'Check the input against the tool input_schema from GET /v1/tools and send it again.',
  unauthenticated: 'Send the header "Authorization: Bearer <key>" with a key issued for this service.',
  permission_denied: 'This operation is not allowed; do not retry it unchanged.',
  not_found: 'Check the name or path; list_files shows what exists in the workspace.',
  method_not_allowed: 'Tools are called with POST and a JSON body; GET /v1/tools lists them.',
  conflict: 'The target is in a state that prevents this change; inspect it and adjust the request.',
  size_exceeded: 'Send or request less data, for example a smaller file or a line range.',
  unsupported_media_type: 'Send the body as JSON with the header "Content-Type: application/json".',
  rate_limited: 'Wait for the time given in Retry-After, then try again.',
  internal: 'An unexpected error occurred on the server; retrying later may help.',
  connection: 'The remote host could not be reached; check the URL or try again later.',
  unavailable: 'A backing service is temporarily unavailable; try again shortly.',
  timeout: 'The operation took too long; try a smaller task or a longer timeout.',
}

export interface ToolErrorOptions {
  /** One plain-English sentence telling a model how to call correctly. */
  hint?: string
  /** Extra machine-readable members for the problem document (e.g. the failing field). */
  details?: Record<string, unknown>
  /** The underlying error; logged, never sent to the caller. */
  cause?: unknown
  /** Extra response headers, such as Retry-After. */
  headers?: Record<string, string>
  /** Which backing component failed, for metrics and logs (never sent to callers). */
  origin?: 'storage' | 'sandbox' | 'browser' | 'network'
  /**
   * The deployment does not offer this (no search provider, no browser, built-ins only): a state of
   * its setup, not a failure, so the 503 is not logged as an error on every call.
   */
  notOffered?: boolean
  /**
   * What kind of refusal this is, for the audit log (never sent to callers): the key's scope, a missing
   * approval, a policy (command, egress asked beyond the key's), or a connection the address rules refused.
   */
  refusal?: Refusal
}

export interface Refusal {
  kind: 'scope' | 'approval' | 'policy' | 'connection'
  /** What was refused: a tool, a host. */
  target?: string
}

export class ToolError extends Error {
  readonly code: ErrorCode
  readonly hint: string
  readonly details: Record<string, unknown> | undefined
  readonly headers: Record<string, string> | undefined
  readonly origin: ToolErrorOptions['origin']
  readonly notOffered: boolean
  readonly refusal: Refusal | undefined

  constructor(code: ErrorCode, message: string, options: ToolErrorOptions = {}) {
    super(message, { cause: options.cause })
    this.name = 'ToolError'
    this.code = code
    this.hint = options.hint ?? defaultHintByCode[code]
    this.details = options.details
    this.headers = options.headers
    this.origin = options.origin
    this.notOffered = options.notOffered === true
    this.refusal = options.refusal
  }

  get status(): number {
    return statusOf(this.code)
  }
}

export function statusOf(code: ErrorCode): number {
  return statusByCode[code]
}

export function titleOf(code: ErrorCode): string {
  return titleByCode[code]
}

export function isToolError(error: unknown): error is ToolError {
  return error instanceof ToolError
}

/**
 * A stack overflow is what input nested deeper than a parser or renderer recurses (Markdown quotes, JSON
 * arrays, HTML elements) ends in: the caller's input is at fault, so it is a 413 with a hint, not a 500.
 */
export function nestingError(error: unknown): ToolError | undefined {
  if (!(error instanceof RangeError) || !/maximum call stack size exceeded/i.test(error.message)) return undefined
  return new ToolError('size_exceeded', 'The input nests too deeply to be processed.', {
    hint: 'Flatten the deepest nesting (lists, quotes, brackets, elements) and send it again.',
    cause: error,
  })
}
