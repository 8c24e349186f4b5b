import { ToolError } from '../../core/errors'
import type { CommandLister } from './command-lister'
import { type CommandName, commandNames } from './command-names'
import { ShellSyntaxError, ShellTooComplexError } from './shell-syntax'

export { type CommandName, commandNames }

/**
 * Which programs execute_command may run, from TOOLPORT_SHELL_ALLOW / TOOLPORT_SHELL_DENY. Deny wins over allow.
 *
 * This is a guard rail against honest mistakes and obvious misuse, not the security boundary: the sandbox is.
 * The command line is parsed, as bash and as POSIX sh (dash, a common /bin/sh), and every program either
 * reading runs is checked, however it is written (lists, pipelines, subshells, substitutions, compound
 * commands, functions, quoting, paths, wrappers such as env, xargs, sudo, find -exec, sh -c '…', eval '…',
 * trap and alias strings). Because of the POSIX reading, `(( i++ ))` also counts as running `i++` (dash runs
 * it as a program), so under an allow list arithmetic is best written as `i=$((i + 1))`.
 * What it cannot see, by design:
 * - code the shell reads from files or standard input: `source f`, `. f`, `sh script.sh`, `echo … | sh`;
 * - code built from data at run time: PS4 with set -x, ${x@P}, arithmetic on variables holding a[$(…)],
 *   mapfile -C and similar callbacks;
 * - programs that run commands in their own language (python -c, awk system(), git aliases, ssh, …) and
 *   wrappers it does not know; a renamed or copied binary (cp /bin/rm ./ls) or a changed PATH.
 * An allow list contains most of these, since the interpreter itself must be allowed; a deny list alone
 * is easy to walk around for anyone determined, which is what the sandbox is for.
 */
export interface CommandPolicy {
  allow?: readonly string[]
  deny?: readonly string[]
  /** Where the command line is read; default commandNames on this thread (see command-lister.ts). */
  lister?: CommandLister
}

/**
 * Shell builtins that only change the shell's own state or print, and so are allowed whenever an allow list
 * is set, without the operator having to name them. Builtins that run other code (eval, exec, source, .,
 * command, builtin) are not here; trap is, because its action string is checked like any other code.
 */
export const shellBuiltins: readonly string[] = [
  ':',
  '[',
  // A bash keyword; where /bin/sh is dash, the POSIX reading sees it as a program that does not exist.
  '[[',
  'break',
  'cd',
  'continue',
  'declare',
  'echo',
  'exit',
  'export',
  'false',
  'getopts',
  'let',
  'local',
  'printf',
  'pwd',
  'read',
  'readonly',
  'return',
  'set',
  'shift',
  'test',
  'trap',
  'true',
  'typeset',
  'umask',
  'unset',
  'wait',
]

const programNamePattern = /^[A-Za-z0-9._+-]{1,128}$/

/** A comma list of program names from the environment; undefined when unset or when it names nothing. */
export function parsePolicyList(value: string | undefined, variable: string): string[] | undefined {
  if (value === undefined) return undefined
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '')
  const invalid = names.find((name) => !programNamePattern.test(name))
  if (invalid !== undefined) {
    throw new Error(
      `${variable} must be a comma-separated list of program names such as "ls,cat,grep" (letters, digits, . _ + -); "${invalid}" is not one.`,
    )
  }
  return names.length > 0 ? names : undefined
}

/**
 * Refuses the command line unless every program it runs passes the policy. Names that are only known at run
 * time (variables, substitutions, globs, eval or sh -c of a variable) are refused whenever a list is set,
 * since they could expand to any program, a denied one included.
 */
export async function checkCommand(command: string, policy: CommandPolicy): Promise<void> {
  const { allow, deny } = policy
  if (allow === undefined && deny === undefined) return
  const names = await namesOf(command, policy.lister ?? commandNames)
  // Deny first, so a denied program is named even when an earlier name would be refused for another reason.
  const denied = names.find((name) => !name.dynamic && deny?.includes(name.name))
  if (denied) throw refusal(denied, `"${shorten(denied.name)}" is denied on this service`, policy)
  for (const name of names) {
    if (name.dynamic) {
      throw refusal(
        name,
        'Call programs by their literal name, not through variables, command substitutions, globs or eval/sh -c of a variable',
        policy,
        `The program name "${shorten(name.name)}" is only known at run time and cannot be checked.`,
      )
    }
    if (allow && !allow.includes(name.name) && !shellBuiltins.includes(name.name)) {
      throw refusal(name, `"${shorten(name.name)}" is not on this service's list of allowed programs`, policy)
    }
  }
}

/**
 * The same policy for a program run without a shell (a command source's argv): its name is the last
 * part of its path, and nothing else in the argv runs.
 */
export function checkProgram(program: string, policy: CommandPolicy): void {
  const entry: CommandName = { name: program.slice(program.lastIndexOf('/') + 1), dynamic: false }
  if (policy.deny?.includes(entry.name)) {
    throw refusal(entry, `"${shorten(entry.name)}" is denied on this service`, policy)
  }
  if (policy.allow && !policy.allow.includes(entry.name)) {
    throw refusal(entry, `"${shorten(entry.name)}" is not on this service's list of allowed programs`, policy)
  }
}

async function namesOf(command: string, lister: CommandLister): Promise<CommandName[]> {
  try {
    return await lister(command)
  } catch (error) {
    if (error instanceof ShellTooComplexError) {
      throw new ToolError('size_exceeded', 'The command is too large or too deeply nested to be checked.', {
        hint: `The command policy could not check it: ${error.message}. Send a shorter command or split it into several calls.`,
        details: { field: 'command' },
        cause: error,
      })
    }
    if (!(error instanceof ShellSyntaxError)) throw error
    throw new ToolError('validation', 'The command could not be parsed as a shell command line.', {
      hint: `The command is not valid shell syntax: ${error.message}. Fix the quoting or syntax and send it again.`,
      details: { field: 'command' },
      cause: error,
    })
  }
}

function refusal(
  name: CommandName,
  reason: string,
  policy: Pick<CommandPolicy, 'allow' | 'deny'>,
  message = `The program "${shorten(name.name)}" is not allowed here.`,
): ToolError {
  // A program on both lists is denied (deny wins), so the hint never calls it allowed.
  const allowedNames = policy.allow?.filter((program) => !policy.deny?.includes(program))
  const allowed = allowedNames
    ? allowedNames.length > 0
      ? `; allowed: ${allowedNames.join(', ')}, and shell builtins such as cd, echo, test`
      : '; only shell builtins such as cd, echo, test are allowed'
    : ''
  return new ToolError('permission_denied', message, {
    hint: `${reason}${allowed}. Do not retry it unchanged.`,
    details: { field: 'command', program: name.name },
    refusal: { kind: 'policy', target: name.name },
  })
}

// Dynamic names are source text and can be long; messages only need enough to recognise them.
function shorten(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text
}
