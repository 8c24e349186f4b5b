import { programName, type ShellWord } from './shell-syntax'

/** What a wrapper can do with the arguments of the program it looked through. */
export interface Runner {
  /** Checks argv as a command: its program, and whatever that program runs in turn. */
  run(argv: readonly ShellWord[]): void
  /** Checks shell code that the program will parse and run, such as the string of sh -c. */
  code(code: ShellWord): void
  /** Records a word that decides what runs but is only known at run time. */
  dynamic(word: ShellWord): void
  /** Records a program that runs under another name. */
  name(name: string): void
}

/** Looks through a program that runs (part of) its arguments as another command. */
export type Wrapper = (runner: Runner, args: readonly ShellWord[]) => void

// When unsure whether an option takes a value, these specs treat it as a flag: the next word is then checked
// as a program, which at worst refuses a harmless command, where skipping it could miss the real program.
interface OptionSpec {
  /** Short options that take a value, attached (-n5) or as the next argument (-n 5). */
  short?: string
  /** Short options whose optional value can only be attached (xargs -i[R]): the rest of the cluster. */
  attached?: string
  /** Long options that take the next argument when written without '='. */
  long?: readonly string[]
}

/**
 * Index of the first operand, skipping options the way getopt does with a leading '+' (these tools stop at
 * the first operand). A non-literal word before that point could expand to anything, options or the
 * program itself, so it is returned instead.
 */
function firstOperand(args: readonly ShellWord[], spec: OptionSpec): number | ShellWord {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as ShellWord
    if (!arg.literal) return arg
    const text = arg.text
    if (text === '--') return i + 1
    if (!text.startsWith('-') || text === '-') return i
    let takesValue = false
    if (text.startsWith('--')) {
      takesValue = !text.includes('=') && (spec.long ?? []).includes(text)
    } else {
      for (let j = 1; j < text.length; j++) {
        const option = text.charAt(j)
        if (spec.attached?.includes(option)) break
        if (spec.short?.includes(option)) {
          takesValue = j === text.length - 1
          break
        }
      }
    }
    if (takesValue) {
      i++
      const value = args[i]
      if (value && !value.literal) return value
    }
  }
  return args.length
}

function afterOptions(spec: OptionSpec, operandsBeforeCommand = 0): Wrapper {
  return (runner, args) => {
    const index = firstOperand(args, spec)
    if (typeof index !== 'number') {
      runner.dynamic(index)
      return
    }
    const skipped = args.slice(index, index + operandsBeforeCommand).find((arg) => !arg.literal)
    if (skipped) {
      runner.dynamic(skipped)
      return
    }
    runner.run(args.slice(index + operandsBeforeCommand))
  }
}

const isAssignment = (arg: ShellWord): boolean => arg.literal && /^[^=-][^=]*=/.test(arg.text)

function quoteForShell(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`
}

const env: Wrapper = (runner, args) => {
  let i = 0
  for (; i < args.length; i++) {
    const arg = args[i] as ShellWord
    if (!arg.literal) {
      runner.dynamic(arg)
      return
    }
    if (arg.text === '--') {
      i++
      break
    }
    if (isAssignment(arg) || arg.text === '-') continue
    if (!arg.text.startsWith('-')) break
    const option = envOption(arg.text)
    if (!option) continue
    const value = option.attached === undefined ? args[++i] : { literal: true as const, text: option.attached }
    if (value && !value.literal) {
      runner.dynamic(value)
      return
    }
    if (option.splits) {
      envSplitString(runner, value?.text ?? '', args.slice(i + 1))
      return
    }
  }
  while (i < args.length && isAssignment(args[i] as ShellWord)) i++
  runner.run(args.slice(i))
}

/** The env option in arg that takes a value, with the value's attached part (undefined: the next arg). */
function envOption(arg: string): { splits: boolean; attached: string | undefined } | undefined {
  const long = /^--(unset|chdir|argv0|split-string)(?:=(.*))?$/s.exec(arg)
  if (long) return { splits: long[1] === 'split-string', attached: long[2] }
  if (arg.startsWith('--')) return undefined
  for (let j = 1; j < arg.length; j++) {
    const option = arg.charAt(j)
    if ('uCPaS'.includes(option)) return { splits: option === 'S', attached: arg.slice(j + 1) || undefined }
  }
  return undefined
}

/**
 * env -S splits its value into words and runs them with the remaining arguments appended. Checking all of it
 * as one shell command line is at least as strict as env's own, simpler splitting.
 */
function envSplitString(runner: Runner, value: string, rest: readonly ShellWord[]): void {
  const unknown = rest.find((arg) => !arg.literal)
  if (unknown) {
    runner.dynamic(unknown)
    return
  }
  runner.code({ literal: true, text: [value, ...rest.map((arg) => quoteForShell(arg.text))].join(' ') })
}

const command: Wrapper = (runner, args) => {
  const index = firstOperand(args, {})
  if (typeof index !== 'number') {
    runner.dynamic(index)
    return
  }
  // command -v / -V only look the name up.
  if (args.slice(0, index).some((arg) => /^-[^-]*[vV]/.test(arg.text))) return
  runner.run(args.slice(index))
}

const shellFlags = /^[-+][^-]/
const shell: Wrapper = (runner, args) => {
  let runsString = false
  let i = 0
  for (; i < args.length; i++) {
    const arg = args[i] as ShellWord
    if (!arg.literal) {
      runner.dynamic(arg)
      return
    }
    if (arg.text === '--' || arg.text === '-') {
      i++
      break
    }
    if (arg.text === '--rcfile' || arg.text === '--init-file') i++
    if (arg.text.startsWith('--')) continue
    if (!shellFlags.test(arg.text)) break
    if (arg.text.startsWith('-') && arg.text.includes('c')) runsString = true
    // -o NAME and -O NAME each take the next argument.
    i += arg.text.slice(1).replaceAll(/[^oO]/g, '').length
  }
  // Without -c the shell runs a script file or its standard input, which are not checked (see policy.ts).
  const code = args[i]
  if (runsString && code) runner.code(code)
}

const evalWrapper: Wrapper = (runner, args) => {
  const unknown = args.find((arg) => !arg.literal)
  if (unknown) {
    runner.dynamic(unknown)
    return
  }
  if (args.length > 0) runner.code({ literal: true, text: args.map((arg) => arg.text).join(' ') })
}

const trap: Wrapper = (runner, args) => {
  const operands = args[0]?.literal && args[0].text === '--' ? args.slice(1) : args
  const [action] = operands
  if (!action) return
  if (!action.literal) {
    runner.dynamic(action)
    return
  }
  // A lone operand, '-' or a number resets signals; -l and -p only print.
  if (operands.length === 1 || action.text.startsWith('-') || /^\d+$/.test(action.text)) return
  runner.code(action)
}

const alias: Wrapper = (runner, args) => {
  for (const arg of args) {
    if (!arg.literal) {
      runner.dynamic(arg)
      return
    }
    const equals = arg.text.indexOf('=')
    // The value replaces the alias name as text before parsing, so it is checked as a command line.
    if (equals > 0) runner.code({ literal: true, text: arg.text.slice(equals + 1) })
  }
}

const hash: Wrapper = (runner, args) => {
  // hash -p PATH NAME makes NAME run PATH.
  const index = args.findIndex((arg) => arg.literal && /^-[^-]*p$/.test(arg.text))
  const path = index < 0 ? undefined : args[index + 1]
  if (!path) return
  if (!path.literal) {
    runner.dynamic(path)
    return
  }
  runner.name(programName(path.text))
}

const find: Wrapper = (runner, args) => {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as ShellWord
    if (arg.literal && ['-exec', '-execdir', '-ok', '-okdir'].includes(arg.text)) {
      const end = args.findIndex((word, j) => j > i && word.literal && (word.text === ';' || word.text === '+'))
      const stop = end < 0 ? args.length : end
      runner.run(args.slice(i + 1, stop))
      i = stop
    }
  }
}

const applet: Wrapper = (runner, args) => {
  if (args[0]?.literal && args[0].text.startsWith('-')) return
  runner.run(args)
}

export const wrappers: ReadonlyMap<string, Wrapper> = new Map<string, Wrapper>([
  ['env', env],
  ['command', command],
  ['builtin', afterOptions({})],
  ['exec', afterOptions({ short: 'a' })],
  ['nice', afterOptions({ short: 'n', long: ['--adjustment'] })],
  ['nohup', afterOptions({})],
  ['setsid', afterOptions({})],
  ['timeout', afterOptions({ short: 'ks', long: ['--kill-after', '--signal'] }, 1)],
  ['stdbuf', afterOptions({ short: 'ioe', long: ['--input', '--output', '--error'] })],
  ['time', afterOptions({ short: 'fo', long: ['--format', '--output'] })],
  [
    'xargs',
    afterOptions({
      short: 'aEdILnPs',
      attached: 'eil',
      long: [
        '--arg-file',
        '--delimiter',
        '--max-lines',
        '--max-args',
        '--max-procs',
        '--max-chars',
        '--process-slot-var',
      ],
    }),
  ],
  ['sudo', sudo()],
  ['doas', afterOptions({ short: 'uC' })],
  ['busybox', applet],
  ['toybox', applet],
  ['eval', evalWrapper],
  ['trap', trap],
  ['alias', alias],
  ['hash', hash],
  ['find', find],
  ...['sh', 'bash', 'dash', 'ash', 'ksh', 'mksh', 'zsh', 'rbash', 'posh', 'yash'].map((name): [string, Wrapper] => [
    name,
    shell,
  ]),
])

function sudo(): Wrapper {
  const spec: OptionSpec = { short: 'CDgpRrTtUu', long: ['--user', '--group', '--chdir', '--prompt', '--host'] }
  return (runner, args) => {
    const index = firstOperand(args, spec)
    if (typeof index !== 'number') {
      runner.dynamic(index)
      return
    }
    let start = index
    while (start < args.length && isAssignment(args[start] as ShellWord)) start++
    runner.run(args.slice(start))
  }
}
