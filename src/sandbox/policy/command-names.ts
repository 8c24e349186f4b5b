import type { CallExpr, DeclClause, File, Node, Syntax, Word } from 'mvdan-sh'
import { wrappers } from './command-wrappers'
import {
  loadShellSyntax,
  parseShell,
  programName,
  resolveWord,
  type ShellDialect,
  ShellSource,
  ShellSyntaxError,
  ShellTooComplexError,
  type ShellWord,
  withGoStacks,
} from './shell-syntax'

/** A program a command line runs; dynamic names are the source text of a word only known at run time. */
export interface CommandName {
  name: string
  dynamic: boolean
}

// Per-call budgets bound the CPU one check can take on hostile input: the GopherJS walk costs ~25-40 µs a
// node (one JS wrapper each) and parsing ~3 µs a byte, so the worst case is about a second. A 200-line
// script needs ~18,000 nodes across both readings; most commands need under 200.
const maxNesting = 8
const maxNodes = 20_000
// How deep the syntax tree may go (nested substitutions, subshells, blocks). Without it, whether deep
// nesting is refused hung on whether the parser happened to overflow the stack, which varies with the JIT.
// Real scripts stay under ~60 levels; each `"$(` adds about five.
const maxTreeDepth = 256
const maxParsedBytes = 256 * 1024

/** What is left of the work one commandNames call may do; owned by that call. */
interface Budget {
  nodes: number
  bytes: number
}

interface Scan {
  syntax: Syntax
  source: ShellSource
  depth: number
  budget: Budget
  names: CommandName[]
}

/**
 * Every program the command line runs, in source order (names that only the POSIX reading finds come after
 * the rest; see scanScript). The parser's walk visits every simple command,
 * wherever it sits (lists, pipelines, subshells, substitutions, compound commands, function bodies,
 * here-documents), and wrappers that run their arguments as a command are looked through.
 * Throws ShellSyntaxError when the text is not valid bash, ShellTooComplexError past the work budget.
 */
export async function commandNames(command: string): Promise<CommandName[]> {
  const syntax = await loadShellSyntax()
  try {
    return scanScript(syntax, command, 0, { nodes: maxNodes, bytes: maxParsedBytes })
  } catch (error) {
    // Parser and walk both recurse per nesting level, so pathological nesting ends in a stack overflow.
    if (error instanceof RangeError) throw new ShellTooComplexError('the command nests too deeply to be checked')
    throw error
  }
}

/**
 * Names from reading the script as bash, then any further names from reading it as POSIX sh. The two differ
 * where it matters: dash runs `((rm -rf /x))` as nested subshells and splits `true &>/dev/null rm x` at
 * the '&', where bash sees arithmetic and a redirection. Since /bin/sh may be either, both readings count.
 */
function scanScript(syntax: Syntax, script: string, depth: number, budget: Budget): CommandName[] {
  if (depth > maxNesting) throw new ShellTooComplexError(`shell code is nested more than ${maxNesting} levels deep`)
  const bash = walk(syntax, parse(syntax, new ShellSource(script), 'bash', budget), depth, budget)
  const posix = posixPrefix(syntax, script, budget)
  if (!posix) return bash
  const seen = new Set(bash.map(key))
  return [...bash, ...walk(syntax, posix, depth, budget).filter((name) => !seen.has(key(name)))]
}

const key = (name: CommandName): string => `${name.dynamic}:${name.name}`

/**
 * The longest POSIX reading of the script that parses. dash runs a script one complete command at a time, so
 * the commands before a line it cannot parse have already run; bash-only syntax further down (arrays, <( ),
 * [[ ]] patterns) must not hide them. A few retries suffice, as each one ends above the failing construct.
 */
function posixPrefix(syntax: Syntax, script: string, budget: Budget): Parsed | undefined {
  let text = script
  for (let attempt = 0; attempt < 3 && text.trim() !== ''; attempt++) {
    try {
      return parse(syntax, new ShellSource(text), 'posix', budget)
    } catch (error) {
      if (!(error instanceof ShellSyntaxError)) throw error
      if (error.line === undefined || error.line <= 1) return undefined
      text = text
        .split('\n')
        .slice(0, error.line - 1)
        .join('\n')
    }
  }
  return undefined
}

interface Parsed {
  file: File
  source: ShellSource
}

function parse(syntax: Syntax, source: ShellSource, dialect: ShellDialect, budget: Budget): Parsed {
  budget.bytes -= source.byteLength
  if (budget.bytes < 0) throw new ShellTooComplexError('the command is too long to be checked')
  return { file: parseShell(syntax, source.text, dialect), source }
}

function walk(syntax: Syntax, { file, source }: Parsed, depth: number, budget: Budget): CommandName[] {
  const scan: Scan = { syntax, source, depth, budget, names: [] }
  // Walk calls back with null once a node's children are done, which is where its level ends.
  let treeDepth = 0
  withGoStacks(() =>
    syntax.Walk(file, (node) => {
      if (!node) {
        treeDepth--
        return true
      }
      treeDepth++
      if (treeDepth > maxTreeDepth) throw new ShellTooComplexError('the command nests too deeply to be checked')
      budget.nodes--
      if (budget.nodes < 0) throw new ShellTooComplexError('the command has too many parts to be checked')
      visit(scan, node)
      return true
    }),
  )
  return scan.names
}

function visit(scan: Scan, node: Node): void {
  switch (scan.syntax.NodeType(node)) {
    case 'CallExpr': {
      // Only wrappers look at their arguments, so the rest are resolved on demand.
      const resolve = (word: Word): ShellWord => resolveWord(scan.syntax, word, scan.source)
      const [program, ...args] = (node as CallExpr).Args
      if (program) runProgram(scan, resolve(program), () => args.map(resolve))
      return
    }
    case 'DeclClause':
      scan.names.push({ name: (node as DeclClause).Variant.Value, dynamic: false })
      return
    case 'LetClause':
      scan.names.push({ name: 'let', dynamic: false })
      return
    case 'TimeClause':
      scan.names.push({ name: 'time', dynamic: false })
      return
    case 'CoprocClause':
      scan.names.push({ name: 'coproc', dynamic: false })
      return
  }
}

function runProgram(scan: Scan, program: ShellWord, args: () => readonly ShellWord[]): void {
  if (!program.literal) {
    dynamic(scan, program)
    return
  }
  const name = programName(program.text)
  scan.names.push({ name, dynamic: false })
  wrappers.get(name)?.(
    {
      run: ([inner, ...rest]) => {
        if (inner) runProgram(scan, inner, () => rest)
      },
      code: (code) => scanCode(scan, code),
      dynamic: (word) => dynamic(scan, word),
      name: (inner) => {
        scan.names.push({ name: inner, dynamic: false })
      },
    },
    args(),
  )
}

function dynamic(scan: Scan, word: ShellWord): void {
  scan.names.push({ name: word.text, dynamic: true })
}

function scanCode(scan: Scan, code: ShellWord): void {
  if (!code.literal) {
    dynamic(scan, code)
    return
  }
  scan.names.push(...scanScript(scan.syntax, code.text, scan.depth + 1, scan.budget))
}
