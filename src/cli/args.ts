/** A command line split into positionals and `--name value` / `--name=value` / bare `--flag` options. */
export interface ParsedArgs {
  positionals: string[]
  /** Option values in the order given; a bare flag is `true`. */
  options: Map<string, Array<string | true>>
}

export class UsageError extends Error {
  override name = 'UsageError'
}

/**
 * Tool parameters come from each tool's schema, so the option set is open: any `--name` is taken,
 * and a value is the next word unless that word is itself an option. `--` ends the options.
 */
export function parseArgs(argv: readonly string[]): ParsedArgs {
  const positionals: string[] = []
  const options = new Map<string, Array<string | true>>()
  const add = (name: string, value: string | true) => {
    if (name === '') throw new UsageError('An option needs a name: "--" alone ends the options.')
    options.set(name, [...(options.get(name) ?? []), value])
  }
  for (let index = 0; index < argv.length; index++) {
    const word = argv[index] as string
    if (word === '--') {
      positionals.push(...argv.slice(index + 1))
      break
    }
    if (!word.startsWith('--')) {
      positionals.push(word)
      continue
    }
    const equals = word.indexOf('=')
    if (equals !== -1) {
      add(word.slice(2, equals), word.slice(equals + 1))
      continue
    }
    const next = argv[index + 1]
    if (next !== undefined && !next.startsWith('--')) {
      add(word.slice(2), next)
      index++
    } else {
      add(word.slice(2), true)
    }
  }
  return { positionals, options }
}

/** The last value of a string option, or undefined; a bare flag where a value is needed is a usage error. */
export function stringOption(args: ParsedArgs, name: string): string | undefined {
  const value = args.options.get(name)?.at(-1)
  if (value === true) throw new UsageError(`--${name} needs a value.`)
  return value
}
