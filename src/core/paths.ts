import { ToolError } from './errors'

/**
 * Workspace paths are checked here, before any storage access. The rules are strict on purpose:
 * a path is relative, '/'-separated, and can only name something inside its workspace.
 */
const maxPathBytes = 768
const maxSegmentBytes = 255
// C0 and C1 controls, DEL, and the Unicode line/paragraph separators.
const forbiddenCharacters = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/
// Percent-escapes of '.', '/', '\' and NUL: harmless as literal names here, but a path that some
// later layer URL-decodes must not turn into a traversal.
const encodedSeparator = /%(2e|2f|5c|00)/i

const pathHint =
  'Use a path relative to the workspace root, separated by "/", such as "src/index.ts"; "..", absolute paths, backslashes and control characters are not allowed.'

function reject(path: string, reason: string, field: string): never {
  throw new ToolError('validation', `Invalid path ${JSON.stringify(path)}: ${reason}.`, {
    hint: pathHint,
    details: { field },
  })
}

export interface NormalizeOptions {
  /** Allow '', '.' and '/'-only forms meaning the workspace root (for listing). */
  allowRoot?: boolean
  /** The input field named in errors. Default: path. */
  field?: string
}

/**
 * Returns the canonical form of a workspace path ('' for the root), or throws a validation ToolError.
 * './a//b/' becomes 'a/b'; anything that could climb out is refused rather than repaired.
 */
export function normalizeWorkspacePath(path: unknown, options: NormalizeOptions = {}): string {
  const field = options.field ?? 'path'
  if (typeof path !== 'string') reject(String(path), 'it is not a string', field)
  // Printable ASCII (most paths) has no controls, surrogates or compatibility forms, and one byte per
  // character: those checks, and the UTF-8 encoding that measures lengths, are skipped for it.
  const ascii = printableAscii.test(path)
  if (!ascii) checkCharacters(path, field)
  if (path.includes('\\')) reject(path, 'it contains a backslash', field)
  if (path.startsWith('/')) reject(path, 'it is absolute', field)
  if (path.startsWith('~')) reject(path, 'home-directory paths are not supported', field)
  if (/^[A-Za-z]:/.test(path)) reject(path, 'it has a drive letter', field)
  if (encodedSeparator.test(path)) reject(path, 'it contains a percent-encoded separator or dot', field)
  if (!ascii) checkCompatibilityForms(path, field)
  const segments: string[] = []
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue
    if (segment === '..') reject(path, 'it contains ".."', field)
    if (/^\.+$/.test(segment)) reject(path, 'it has a segment made only of dots', field)
    if (segment.trim() === '') reject(path, 'it has a segment made only of spaces', field)
    if ((ascii ? segment.length : utf8Length(segment)) > maxSegmentBytes) {
      reject(path, `a segment is longer than ${maxSegmentBytes} bytes`, field)
    }
    segments.push(segment)
  }
  const normalized = segments.join('/')
  if (normalized === '' && !options.allowRoot) reject(path, 'it names the workspace root, not a file', field)
  if ((ascii ? normalized.length : utf8Length(normalized)) > maxPathBytes) {
    reject(path, `it is longer than ${maxPathBytes} bytes`, field)
  }
  return normalized
}

const printableAscii = /^[\x20-\x7e]*$/

/** Checks only a path with characters outside printable ASCII needs (this one and the next). */
function checkCharacters(path: string, field: string): void {
  if (forbiddenCharacters.test(path)) reject(path, 'it contains a control character', field)
  // Storage names are UTF-8, where every unpaired surrogate becomes U+FFFD: "\ud800" and "\udbff" would
  // both name the file "\ufffd".
  if (/\p{Cs}/u.test(path)) reject(path, 'it contains an unpaired UTF-16 surrogate (not valid Unicode)', field)
}

function checkCompatibilityForms(path: string, field: string): void {
  // Compatibility forms such as U+2025 (two-dot leader) or U+FF0F (fullwidth solidus) become '..' and
  // '/' under NFKC, which some filesystems and clients apply.
  const compatible = path.normalize('NFKC')
  if (
    compatible !== path &&
    (compatible.includes('\\') || compatible.split('/').some((s) => /^\.{2,}$/.test(s.trim())))
  ) {
    reject(path, 'it contains characters that normalize to a path separator or dots', field)
  }
}

function utf8Length(text: string): number {
  return new TextEncoder().encode(text).byteLength
}

const identifierPattern = /^[A-Za-z0-9._-]{1,64}$/

/** Workspace and tenant ids: [A-Za-z0-9._-]{1,64}, and not made only of dots. */
export function isValidIdentifier(value: string): boolean {
  return identifierPattern.test(value) && !/^\.+$/.test(value)
}
