import { describe, expect, it } from 'vitest'
import { ToolError } from '../../core/errors'
import { type CommandPolicy, checkCommand, commandNames, parsePolicyList, shellBuiltins } from './policy'

const denyRm: CommandPolicy = { deny: ['rm'] }
const allowSome: CommandPolicy = { allow: ['ls', 'cat', 'grep'] }

async function refusal(command: string, policy: CommandPolicy): Promise<ToolError> {
  try {
    await checkCommand(command, policy)
  } catch (error) {
    if (error instanceof ToolError) return error
    throw error
  }
  throw new Error(`expected ${JSON.stringify(command)} to be refused`)
}

// Each line tries to run rm; the second column is the program the deny-list refusal names (the literal "rm",
// or the source text of a name only known at run time).
const hostile: ReadonlyArray<readonly [string, string]> = [
  ['rm -rf /', 'rm'],
  ['ls; rm x', 'rm'],
  ['ls && rm x', 'rm'],
  ['ls || rm x', 'rm'],
  ['ls | rm', 'rm'],
  ['ls & rm x', 'rm'],
  ['ls |& rm x', 'rm'],
  ['! rm x', 'rm'],
  ['(rm x)', 'rm'],
  ['{ rm x; }', 'rm'],
  ['echo $(rm x)', 'rm'],
  ['echo "$(rm x)"', 'rm'],
  ['echo `rm x`', 'rm'],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell syntax, not a template
  ['echo ${X:-$(rm x)}', 'rm'],
  ['echo $(( $(rm x) + 1 ))', 'rm'],
  ['cat <(rm x)', 'rm'],
  ['ls > >(rm x)', 'rm'],
  ['ls > $(rm x)', 'rm'],
  ['a=($(rm x))', 'rm'],
  ['export A=$(rm x)', 'rm'],
  ['[[ -f x ]] && rm x', 'rm'],
  ['[[ $(rm x) ]]', 'rm'],
  ['if true; then rm x; fi', 'rm'],
  ['if rm x; then :; fi', 'rm'],
  ['while false; do rm x; done', 'rm'],
  ['until rm x; do :; done', 'rm'],
  ['for i in 1; do rm x; done', 'rm'],
  ['for i in $(rm x); do :; done', 'rm'],
  ['select i in a; do rm x; done', 'rm'],
  ['case a in a) rm x;; esac', 'rm'],
  ['f() { rm x; }; f', 'rm'],
  ['function g { rm x; }', 'rm'],
  ['time rm x', 'rm'],
  ['coproc rm x', 'rm'],
  ['/bin/rm x', 'rm'],
  ['/usr/bin/../bin/rm x', 'rm'],
  ['./rm', 'rm'],
  ['./x/rm', 'rm'],
  ['\\rm x', 'rm'],
  ["'rm' x", 'rm'],
  ['"rm" x', 'rm'],
  ['"r"m x', 'rm'],
  ["r''m x", 'rm'],
  ['r\\m x', 'rm'],
  ['r\\\nm x', 'rm'],
  ['FOO=1 rm x', 'rm'],
  ['FOO=$(ls) rm x', 'rm'],
  ['env rm x', 'rm'],
  ['env -i FOO=1 rm x', 'rm'],
  ['env -u HOME -- A=1 rm x', 'rm'],
  ["env -S 'rm x'", 'rm'],
  ["env -S 'sh -c' 'rm x'", 'rm'],
  ['command rm x', 'rm'],
  ['command -p rm x', 'rm'],
  ['builtin rm x', 'rm'],
  ['exec rm x', 'rm'],
  ['exec -a ls rm x', 'rm'],
  ['nice -n 5 rm x', 'rm'],
  ['nice -5 rm x', 'rm'],
  ['nohup rm x', 'rm'],
  ['timeout 5 rm x', 'rm'],
  ['timeout -s KILL --foreground 5 rm x', 'rm'],
  ['stdbuf -oL rm x', 'rm'],
  ['/usr/bin/time -f %e rm x', 'rm'],
  ['xargs rm < list', 'rm'],
  ['xargs -I {} -n 1 rm {} < list', 'rm'],
  ['xargs -is rm x < list', 'rm'],
  ['find . -name x -exec rm {} \\;', 'rm'],
  ['find . -execdir sh -c "rm x" \\;', 'rm'],
  ['sudo -u root rm x', 'rm'],
  ['doas rm x', 'rm'],
  ['busybox rm x', 'rm'],
  ['toybox rm x', 'rm'],
  ['env nice nohup rm x', 'rm'],
  ["sh -c 'rm x'", 'rm'],
  ['bash -c "ls; rm x"', 'rm'],
  ["bash -ec 'ls && rm x' name", 'rm'],
  ["bash -o errexit -c 'rm x'", 'rm'],
  ['dash -c \'sh -c "rm x"\'', 'rm'],
  ["busybox sh -c 'rm x'", 'rm'],
  ['eval rm x', 'rm'],
  ["eval 'ls; rm x'", 'rm'],
  ["trap 'rm x' EXIT", 'rm'],
  ["shopt -s expand_aliases\nalias ll='rm -rf'\nll /", 'rm'],
  ['hash -p /bin/rm ls; ls x', 'rm'],
  ['cat <<EOF\n$(rm x)\nEOF', 'rm'],
  ['cat <<EOF\nhello\nEOF\nrm x', 'rm'],
  ['cat <<-EOF | rm\n\thello\n\tEOF', 'rm'],
  ['ls\nrm x', 'rm'],
  // Where /bin/sh is dash, these run rm although bash reads arithmetic or a redirection.
  ['((rm -rf /x))', 'rm'],
  ['true &>/dev/null rm -rf /x', 'rm'],
  ['((rm -rf /x))\ncat <(ls)', 'rm'],
  ['true &>/dev/null rm x\na=(1 2)\nls', 'rm'],
  ['[[ $x =~ a|rm ]]', 'rm'],
  ['ls\r\nrm x', 'rm'],
  ['eval "$CMD"', '"$CMD"'],
  ['eval $CMD', '$CMD'],
  ['sh -c "$CMD"', '"$CMD"'],
  ['$CMD x', '$CMD'],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell syntax, not a template
  ['${CMD} x', '${CMD}'],
  ['"$CMD" x', '"$CMD"'],
  ['$(echo rm) x', '$(echo rm)'],
  ['`echo rm` x', '`echo rm`'],
  ['r*m x', 'r*m'],
  ['r?m x', 'r?m'],
  ['[r]m x', '[r]m'],
  ['{rm,x}', '{rm,x}'],
  ['{rm,}', '{rm,}'],
  ['rm{,}', 'rm{,}'],
  ['@(rm) x', '@(rm)'],
  ["$'rm' x", "$'rm'"],
  ['env $CMD x', '$CMD'],
  ['xargs $CMD < list', '$CMD'],
]

describe('command policy', () => {
  // Runs first so that the first call includes loading the parser.
  it('reports how long loading the parser and a typical parse take', async () => {
    const loadStart = performance.now()
    await commandNames('ls')
    const firstParse = performance.now() - loadStart
    const typical = 'cd src && ls -la | grep -v test > out.txt; for f in *.ts; do wc -l "$f"; done'
    const runs = 200
    const start = performance.now()
    for (let i = 0; i < runs; i++) await commandNames(typical)
    const perParse = (performance.now() - start) / runs
    console.log(
      `command policy: first parse (loads mvdan-sh) ${firstParse.toFixed(1)} ms, typical parse ${perParse.toFixed(3)} ms`,
    )
    expect(Error.stackTraceLimit).not.toBe(Number.POSITIVE_INFINITY)
  })

  it.each(hostile)('refuses %j under a deny list', async (command, program) => {
    const error = await refusal(command, denyRm)
    expect(error.code).toBe('permission_denied')
    expect(error.details).toEqual({ field: 'command', program })
  })

  it.each(hostile)('refuses %j under an allow list', async (command) => {
    const error = await refusal(command, allowSome)
    expect(error.code).toBe('permission_denied')
  })

  it.each([
    'ls # ; rm x',
    "echo 'rm x'",
    'echo "rm -rf /"',
    'cat rm',
    'grep -r rm .',
    "cat <<'EOF'\n$(rm x)\nEOF",
    'command -v rm',
    "trap '' INT",
    'ls -la | grep x && cat y',
  ])('allows %j under a deny list', async (command) => {
    await expect(checkCommand(command, denyRm)).resolves.toBeUndefined()
  })

  it.each([
    'ls -la | grep x && cat y',
    'cd /tmp && ls; echo done',
    'if test -f x; then cat x; else echo missing >&2; exit 1; fi',
    '[ -f x ] && cat x || true',
    'for f in *.txt; do cat "$f"; done',
    'x=$(ls); printf "%s\\n" "$x"',
    'set -e; export A=1; local b; read -r line < x; cat "$line"',
    "trap 'cat x' EXIT",
    'ls /bin/../bin',
    'FOO=1 /bin/ls "$HOME"',
  ])('allows %j under the allow list ls,cat,grep', async (command) => {
    await expect(checkCommand(command, allowSome)).resolves.toBeUndefined()
  })

  it('refuses programs outside the allow list, builtins that run code included', async () => {
    for (const command of ['wc -l x', 'source x', '. x', 'exec ls', 'command ls', 'eval ls', 'f() { ls; }; f']) {
      expect((await refusal(command, allowSome)).code).toBe('permission_denied')
    }
    for (const name of ['eval', 'exec', 'source', '.', 'command', 'builtin']) expect(shellBuiltins).not.toContain(name)
  })

  it('lets deny win over allow', async () => {
    const error = await refusal('ls', { allow: ['ls'], deny: ['ls'] })
    expect(error.details).toEqual({ field: 'command', program: 'ls' })
  })

  it('allows sourcing files under a deny list (the file is not checked)', async () => {
    await expect(checkCommand('source ./env.sh && . ./more.sh; sh script.sh', denyRm)).resolves.toBeUndefined()
  })

  it('names the program and the allowed list in the hint', async () => {
    const denied = await refusal('ls && rm x', { allow: ['ls', 'cat', 'grep'], deny: ['rm'] })
    expect(denied.message).toBe('The program "rm" is not allowed here.')
    expect(denied.hint).toContain('"rm"')
    expect(denied.hint).toContain('ls, cat, grep')

    const notAllowed = await refusal('ls | wc -l', allowSome)
    expect(notAllowed.message).toBe('The program "wc" is not allowed here.')
    expect(notAllowed.hint).toContain('"wc"')
    expect(notAllowed.hint).toContain('ls, cat, grep')

    const computed = await refusal('$CMD x', allowSome)
    expect(computed.hint).toMatch(/^Call programs by their literal name/)
    expect(computed.hint).toContain('ls, cat, grep')
  })

  it.each(['ls (', 'if then fi', 'echo "unterminated', 'cat <(ls', 'case x in'])(
    'rejects %j as invalid syntax',
    async (command) => {
      const error = await refusal(command, denyRm)
      expect(error.code).toBe('validation')
      expect(error.hint).toMatch(/^The command is not valid shell syntax: /)
      expect(error.details).toEqual({ field: 'command' })
    },
  )

  it('rejects invalid syntax inside sh -c strings', async () => {
    expect((await refusal("sh -c 'ls ('", denyRm)).code).toBe('validation')
  })

  it('checks a 200-line script within the work budget', async () => {
    const script = Array.from(
      { length: 200 },
      (_, i) => `if [ -f "file${i}" ]; then grep -n "x" "file${i}" | head -5 > "out/${i}.txt" || echo "no ${i}"; fi`,
    ).join('\n')
    await expect(checkCommand(script, { deny: ['rm'] })).resolves.toBeUndefined()
    expect((await refusal(`${script}\nrm x`, denyRm)).code).toBe('permission_denied')
  })

  it('refuses commands too large or too deeply nested to check', async () => {
    let nested = 'rm x'
    for (let i = 0; i < 10; i++) nested = `sh -c '${nested.replaceAll("'", "'\\''")}'`
    const deep = `echo ${'"$('.repeat(300)}ls${')"'.repeat(300)}`
    for (const command of [nested, deep, `${'$('.repeat(5000)}${')'.repeat(5000)}`]) {
      expect((await refusal(command, denyRm)).code).toBe('size_exceeded')
    }
    expect((await refusal('ls x; '.repeat(10_000), denyRm)).code).toBe('size_exceeded')
    await expect(checkCommand('ls', denyRm)).resolves.toBeUndefined()
    // The depth bound leaves room for real nesting: 40 substitutions inside each other still pass.
    await expect(checkCommand(`${'echo $('.repeat(40)}ls${')'.repeat(40)}`, denyRm)).resolves.toBeUndefined()
    expect((await refusal(`${'echo $('.repeat(40)}rm x${')'.repeat(40)}`, denyRm)).code).toBe('permission_denied')
  })

  it('never throws without a policy, even for garbage', async () => {
    for (const command of ['ls (', '))))', '\u0000', 'rm -rf /', '$CMD']) {
      await expect(checkCommand(command, {})).resolves.toBeUndefined()
    }
  })
})

describe('commandNames', () => {
  it.each([
    ['ls -la | grep x && cat y', ['ls', 'grep', 'cat']],
    ['/usr/bin/../bin/rm x', ['rm']],
    ['FOO=1 env -i A=1 nice -n 5 rm x', ['env', 'nice', 'rm']],
    ["sh -c 'ls | wc -l'", ['sh', 'ls', 'wc']],
    ['echo $(date)', ['echo', 'date']],
    ['export A=1; local b; let i=1', ['export', 'local', 'let']],
    ['ls # rm', ['ls']],
    ['find . -exec grep -l x {} +', ['find', 'grep']],
  ])('lists the programs of %j', async (command, names) => {
    expect((await commandNames(command)).map((name) => name.name)).toEqual(names)
  })

  it('reports names only known at run time by their source text, non-ASCII included', async () => {
    expect(await commandNames('echo é; "$Xé" x; r*m')).toEqual([
      { name: 'echo', dynamic: false },
      { name: '"$Xé"', dynamic: true },
      { name: 'r*m', dynamic: true },
    ])
  })

  it('keeps the [ builtin literal', async () => {
    expect(await commandNames('[ -f x ]')).toEqual([{ name: '[', dynamic: false }])
  })
})

describe('parsePolicyList', () => {
  it('trims names and drops empty entries', () => {
    expect(parsePolicyList(' ls , cat,,grep ,', 'TOOLPORT_SHELL_ALLOW')).toEqual(['ls', 'cat', 'grep'])
    expect(parsePolicyList('python3.12,g++,git-lfs,a_b', 'TOOLPORT_SHELL_ALLOW')).toEqual([
      'python3.12',
      'g++',
      'git-lfs',
      'a_b',
    ])
  })

  it('treats an unset or empty list as no list', () => {
    expect(parsePolicyList(undefined, 'TOOLPORT_SHELL_DENY')).toBeUndefined()
    expect(parsePolicyList('', 'TOOLPORT_SHELL_DENY')).toBeUndefined()
    expect(parsePolicyList(' , ', 'TOOLPORT_SHELL_DENY')).toBeUndefined()
  })

  it.each(['rm -rf', '/bin/rm', 'r*m', '$X', 'a'.repeat(129), 'ls;rm'])('rejects %j, naming the variable', (name) => {
    expect(() => parsePolicyList(`ls,${name}`, 'TOOLPORT_SHELL_DENY')).toThrow(/TOOLPORT_SHELL_DENY/)
  })
})
