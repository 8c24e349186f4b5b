import { ToolError } from '../../core/errors'

/**
 * list_files' glob matching, in time bounded by the pattern's length times the path's. Glob libraries
 * (picomatch, minimatch, micromatch) compile a glob to a backtracking regular expression: five names of
 * 100 characters against `*a*a*a*a*a*b` took 12 s of the event loop, each further `*` multiplying it.
 * Here every `*` (and `**` across segments) is matched greedily, backtracking only to the last star, the
 * classic wildcard algorithm: no input makes it exponential.
 *
 * Syntax: `*` (any characters but `/`), `?` (one character), `[abc]`, `[a-z]`, `[!x]` / `[^x]`,
 * `[[:alpha:]]`-style classes, `**` as a whole segment (any number of folders), `{a,b}` alternatives
 * (nested, at most 64 in all), `\` escapes, a leading `!` to negate. Extended globs (`@(a|b)` …) are refused.
 * Wildcards match names that start with a dot, as picomatch's `dot: true` did.
 */
export type PathMatcher = (relativePath: string) => boolean

const maxAlternatives = 64

type Token = { kind: 'star' } | { kind: 'one' } | { kind: 'char'; value: string } | { kind: 'class'; test: CharTest }
type CharTest = (character: string) => boolean
type Segment = { kind: 'globstar' } | { kind: 'tokens'; tokens: Token[] }

export class GlobError extends Error {}

const posixClasses: Record<string, RegExp> = {
  alnum: /[\p{L}\p{N}]/u,
  alpha: /\p{L}/u,
  blank: /[ \t]/,
  digit: /[0-9]/,
  lower: /\p{Ll}/u,
  punct: /[!-/:-@[-`{-~]/,
  space: /\s/,
  upper: /\p{Lu}/u,
  word: /[\p{L}\p{N}_]/u,
  xdigit: /[0-9A-Fa-f]/,
}

/** Parses `[...]` starting at `start` (the `[`); returns the test and the index after `]`. */
function parseClass(characters: string[], start: number): { test: CharTest; end: number } {
  let index = start + 1
  const negated = characters[index] === '!' || characters[index] === '^'
  if (negated) index++
  const tests: CharTest[] = []
  let first = true
  while (index < characters.length && (characters[index] !== ']' || first)) {
    first = false
    const character = characters[index] as string
    if (character === '[' && characters[index + 1] === ':') {
      const close = characters.indexOf(':', index + 2)
      const name = close > 0 && characters[close + 1] === ']' ? characters.slice(index + 2, close).join('') : ''
      const pattern = posixClasses[name]
      if (!pattern) throw new GlobError(`unknown character class [:${name}:]`)
      tests.push((candidate) => pattern.test(candidate))
      index = close + 2
      continue
    }
    let low = character
    if (low === '\\' && index + 1 < characters.length) low = characters[++index] as string
    index++
    if (characters[index] === '-' && index + 1 < characters.length && characters[index + 1] !== ']') {
      let high = characters[index + 1] as string
      index += 2
      if (high === '\\' && index < characters.length) high = characters[index++] as string
      const [from, to] = [low.codePointAt(0) as number, high.codePointAt(0) as number]
      if (from > to) throw new GlobError(`the range ${low}-${high} runs backwards`)
      tests.push(
        (candidate) => (candidate.codePointAt(0) as number) >= from && (candidate.codePointAt(0) as number) <= to,
      )
    } else {
      tests.push((candidate) => candidate === low)
    }
  }
  if (index >= characters.length) throw new GlobError('a [ has no closing ]')
  const test: CharTest = (candidate) => candidate !== '/' && tests.some((one) => one(candidate)) !== negated
  return { test, end: index + 1 }
}

function parseSegment(segment: string): Segment {
  if (segment === '**') return { kind: 'globstar' }
  const characters = Array.from(segment)
  const tokens: Token[] = []
  for (let index = 0; index < characters.length; ) {
    const character = characters[index] as string
    if (character === '\\') {
      if (index + 1 >= characters.length) throw new GlobError('it ends with a lone \\')
      tokens.push({ kind: 'char', value: characters[index + 1] as string })
      index += 2
    } else if (character === '*') {
      // Consecutive stars are one star inside a segment.
      if (tokens.at(-1)?.kind !== 'star') tokens.push({ kind: 'star' })
      index++
    } else if (character === '?') {
      tokens.push({ kind: 'one' })
      index++
    } else if (character === '[') {
      const { test, end } = parseClass(characters, index)
      tokens.push({ kind: 'class', test })
      index = end
    } else {
      tokens.push({ kind: 'char', value: character })
      index++
    }
  }
  return { kind: 'tokens', tokens }
}

/** Splits on '/' outside brackets and escapes. */
function splitSegments(pattern: string): string[] {
  const segments: string[] = []
  let current = ''
  let inClass = false
  for (let index = 0; index < pattern.length; index++) {
    const character = pattern[index] as string
    if (character === '\\' && index + 1 < pattern.length) {
      current += character + pattern[++index]
      continue
    }
    if (character === '[' && !inClass) inClass = true
    else if (character === ']' && inClass) inClass = false
    if (character === '/' && !inClass) {
      segments.push(current)
      current = ''
    } else current += character
  }
  segments.push(current)
  return segments
}

/** `{a,b}` alternatives, expanded (nested ones too); a brace group without a comma stays literal. */
export function expandBraces(pattern: string, limit = maxAlternatives): string[] {
  let depth = 0
  let open = -1
  const commas: number[] = []
  for (let index = 0; index < pattern.length; index++) {
    const character = pattern[index]
    if (character === '\\') {
      index++
    } else if (character === '{') {
      if (depth === 0) {
        open = index
        commas.length = 0
      }
      depth++
    } else if (character === ',' && depth === 1) {
      commas.push(index)
    } else if (character === '}' && depth > 0) {
      depth--
      if (depth > 0) continue
      if (commas.length === 0) {
        // Literal braces: keep them, expand what follows.
        return expandBraces(pattern.slice(index + 1), limit).map((rest) => pattern.slice(0, index + 1) + rest)
      }
      const head = pattern.slice(0, open)
      const bounds = [open, ...commas, index]
      const options = bounds.slice(1).map((end, position) => pattern.slice((bounds[position] as number) + 1, end))
      const tails = expandBraces(pattern.slice(index + 1), limit)
      const expanded: string[] = []
      for (const option of options) {
        for (const inner of expandBraces(option, limit)) {
          for (const tail of tails) {
            expanded.push(head + inner + tail)
            if (expanded.length > limit)
              throw new GlobError(`its {…} alternatives expand to more than ${limit} patterns`)
          }
        }
      }
      return expanded
    }
  }
  return [pattern]
}

function matchOne(token: Token, character: string): boolean {
  if (token.kind === 'one') return true
  if (token.kind === 'char') return token.value === character
  return token.kind === 'class' && token.test(character)
}

/** Greedy wildcard matching: items that each match one element, and stars that match any run of them. */
function greedyMatch<P, S>(
  pattern: P[],
  subject: S[],
  isStar: (item: P) => boolean,
  matches: (item: P, element: S) => boolean,
) {
  let position = 0
  let index = 0
  let star = -1
  let starIndex = 0
  while (index < subject.length) {
    const item = pattern[position]
    if (item !== undefined && !isStar(item) && matches(item, subject[index] as S)) {
      position++
      index++
    } else if (item !== undefined && isStar(item)) {
      star = position++
      starIndex = index
    } else if (star >= 0) {
      position = star + 1
      index = ++starIndex
    } else return false
  }
  while (position < pattern.length && isStar(pattern[position] as P)) position++
  return position === pattern.length
}

const matchSegment = (tokens: Token[], name: string) =>
  greedyMatch(tokens, Array.from(name), (token) => token.kind === 'star', matchOne)

function compile(pattern: string): (segments: string[]) => boolean {
  const parsed = splitSegments(pattern).map(parseSegment)
  return (segments) =>
    greedyMatch(
      parsed,
      segments,
      (segment) => segment.kind === 'globstar',
      (segment, name) => segment.kind === 'tokens' && matchSegment(segment.tokens, name),
    )
}

/** A matcher for paths relative to the listed folder; `basename`: a pattern without '/' matches names. */
export function globMatcher(glob: string, options: { basename: boolean }): PathMatcher {
  let pattern = glob
  // A pattern with a '/' (./x included) is anchored at the listed folder.
  const byName = options.basename && !glob.includes('/')
  const negated = pattern.startsWith('!') && !pattern.startsWith('!(')
  if (negated) pattern = pattern.slice(1)
  while (pattern.startsWith('./')) pattern = pattern.slice(2)
  if (/(^|[^\\])[@!+*?]\(/.test(pattern)) throw new GlobError('extended globs such as @(a|b) are not supported')
  const compiled = expandBraces(pattern).map(compile)
  return (relativePath) => {
    const segments = relativePath.split('/')
    const subject = byName ? segments.slice(-1) : segments
    return compiled.some((matches) => matches(subject)) !== negated
  }
}

/** globMatcher with its refusal as the 400 a caller sees. */
export function globFilter(glob: string, options: { basename: boolean }): PathMatcher {
  try {
    return globMatcher(glob, options)
  } catch (error) {
    if (!(error instanceof GlobError)) throw error
    throw new ToolError('validation', `Invalid glob ${JSON.stringify(glob)}: ${error.message}.`, {
      hint: 'Use a glob such as "*.ts", "src/**/*.md", "**/test_*.py" or "*.{ts,tsx}".',
      details: { field: 'glob' },
    })
  }
}
