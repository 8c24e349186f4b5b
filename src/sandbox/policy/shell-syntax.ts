import type { DblQuoted, File, GoError, Lit, Node, SglQuoted, Syntax, Word } from 'mvdan-sh'

/** The text is not valid shell syntax; line is where the parser gave up, when it said. */
export class ShellSyntaxError extends Error {
  readonly line: number | undefined

  constructor(message: string) {
    super(message)
    this.name = 'ShellSyntaxError'
    const line = /^(\d+):\d+: /.exec(message)?.[1]
    this.line = line === undefined ? undefined : Number(line)
  }
}

/** The text is too large, or nests shell code too deeply, to be checked within the work budget. */
export class ShellTooComplexError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ShellTooComplexError'
  }
}

/**
 * Loads the parser on first use: mvdan-sh is a 1.5 MB GopherJS bundle that takes ~200 ms to evaluate, which
 * only services with a command policy should pay. The module cache makes every later import free, so no
 * promise of our own is kept at module level.
 */
export async function loadShellSyntax(): Promise<Syntax> {
  const limit = Error.stackTraceLimit
  const { default: sh } = await import('mvdan-sh')
  // GopherJS sets Error.stackTraceLimit = Infinity for the whole process when it loads. Put the limit back so
  // errors elsewhere keep short stacks; withGoStacks restores Infinity while GopherJS code runs. Only the
  // caller that saw the old value restores it, so concurrent first calls cannot leave Infinity behind.
  if (Error.stackTraceLimit === Number.POSITIVE_INFINITY && limit !== Number.POSITIVE_INFINITY) {
    Error.stackTraceLimit = limit
  }
  return sh.syntax
}

/**
 * Runs synchronous GopherJS code with the unlimited stack traces it was built for: its recover() compares
 * stack depths read from new Error().stack, which a capped limit would make wrong.
 */
export function withGoStacks<T>(run: () => T): T {
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = Number.POSITIVE_INFINITY
  try {
    return run()
  } finally {
    Error.stackTraceLimit = limit
  }
}

/** bash is what scripts are written for; posix is how dash, a common /bin/sh, reads the same text. */
export type ShellDialect = 'bash' | 'posix'

export function parseShell(syntax: Syntax, text: string, dialect: ShellDialect): File {
  const language = dialect === 'bash' ? syntax.LangBash : syntax.LangPOSIX
  try {
    return withGoStacks(() => syntax.NewParser(syntax.Variant(language)).Parse(text, ''))
  } catch (error) {
    if (error instanceof RangeError) throw error
    const message = isGoError(error) ? error.Error() : String(error)
    // A stack overflow that GopherJS's panic machinery wrapped is still an overflow, not a syntax error.
    if (message.includes('Maximum call stack size exceeded')) throw new RangeError(message)
    throw new ShellSyntaxError(message)
  }
}

function isGoError(error: unknown): error is GoError {
  return typeof error === 'object' && error !== null && typeof (error as Partial<GoError>).Error === 'function'
}

/** The parsed text as UTF-8, because node positions are byte offsets (Go strings). */
export class ShellSource {
  private readonly bytes: Uint8Array

  constructor(readonly text: string) {
    this.bytes = new TextEncoder().encode(text)
  }

  get byteLength(): number {
    return this.bytes.length
  }

  textOf(node: Node): string {
    return new TextDecoder().decode(this.bytes.subarray(node.Pos().Offset(), node.End().Offset()))
  }
}

/** A word as the shell will see it: its value after quote removal when that is known before running. */
export type ShellWord = { literal: true; text: string } | { literal: false; text: string }

/**
 * Quote removal for words made only of literal text. Anything the shell expands at run time (parameters,
 * substitutions, arithmetic, $'…', globs, brace expansion) makes the word non-literal, reported by its source.
 */
export function resolveWord(syntax: Syntax, word: Word, source: ShellSource): ShellWord {
  let text = ''
  // Unquoted, unescaped pattern characters in order: only these make globs and brace expansions ({a,b}, {1..3}).
  let specials = ''
  let expands = false
  for (const part of word.Parts) {
    const type = syntax.NodeType(part)
    if (type === 'Lit') {
      const unquoted = unescapeUnquoted((part as Lit).Value)
      text += unquoted.text
      specials += unquoted.specials
    } else if (type === 'SglQuoted' && !(part as SglQuoted).Dollar) {
      text += (part as SglQuoted).Value
    } else if (type === 'DblQuoted' && !(part as DblQuoted).Dollar) {
      for (const inner of (part as DblQuoted).Parts) {
        if (syntax.NodeType(inner) === 'Lit') text += unescapeDoubleQuoted((inner as Lit).Value)
        else expands = true
      }
    } else {
      expands = true
    }
  }
  if (expands || /[*?]|\[.*\]|\{.*(?:,|\.\.).*\}/.test(specials)) return { literal: false, text: source.textOf(word) }
  return { literal: true, text }
}

function unescapeUnquoted(value: string): { text: string; specials: string } {
  let text = ''
  let specials = ''
  for (let i = 0; i < value.length; i++) {
    const char = value.charAt(i)
    if (char === '\\' && i + 1 < value.length) {
      i++
      if (value.charAt(i) !== '\n') text += value.charAt(i)
      continue
    }
    if ('*?[]{},.'.includes(char)) specials += char
    text += char
  }
  return { text, specials }
}

function unescapeDoubleQuoted(value: string): string {
  return value.replace(/\\([$`"\\\n])/g, (_, char: string) => (char === '\n' ? '' : char))
}

/** The program name the shell looks up: a path runs the file it names, so only its last segment matters. */
export function programName(path: string): string {
  const trimmed = path.replace(/\/+$/, '')
  if (trimmed === '') return path === '' ? '' : '/'
  return trimmed.slice(trimmed.lastIndexOf('/') + 1)
}
