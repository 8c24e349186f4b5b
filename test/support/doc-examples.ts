import { readFileSync } from 'node:fs'

/** One command of a document's shell examples, and what the document says it answers. */
export interface DocCommand {
  /** The command as the document writes it (continuation lines joined). */
  command: string
  /** The `# → {…}` line under it: a JSON value its answer must contain. */
  expected?: unknown
  line: number
}

/**
 * The ```sh blocks of a Markdown file, in order, as commands: lines ending in "\" are joined, and so are
 * those of a single-quoted argument that spans lines; comments are dropped except the `# →` line that
 * says what the command above answers. The examples start at the
 * block that defines `T` (what comes before installs and starts the service); a block whose first line
 * is `# not run: …` is left out (it needs what a test machine does not have, such as the internet).
 */
export function docCommands(file: URL): DocCommand[] {
  const lines = readFileSync(file, 'utf8').split('\n')
  const commands: DocCommand[] = []
  let inBlock = false
  let skipping = false
  let pending = ''
  let pendingLine = 0
  lines.forEach((raw, index) => {
    const line = raw.trimEnd()
    if (!inBlock) {
      if (/^```(sh|bash)\s*$/.test(line)) {
        inBlock = true
        skipping = /^# not run:/.test(lines[index + 1] ?? '')
      }
      return
    }
    if (line === '```') {
      inBlock = false
      return
    }
    if (skipping) return
    const expectation = /^#\s*→\s*(.+)$/.exec(line)
    if (expectation?.[1]) {
      const last = commands.at(-1)
      if (last) last.expected = JSON.parse(expectation[1])
      return
    }
    if (pending === '' && (line.trim() === '' || line.trimStart().startsWith('#'))) return
    if (pending === '') pendingLine = index + 1
    pending += line.endsWith('\\') ? `${line.slice(0, -1)} ` : line
    // A single-quoted argument (a JSON body) may span lines: the command goes on until it closes.
    const quoteOpen = (pending.match(/'/g)?.length ?? 0) % 2 === 1
    if (quoteOpen) pending += '\n'
    else if (!line.endsWith('\\')) {
      commands.push({ command: pending, line: pendingLine })
      pending = ''
    }
  })
  const start = commands.findIndex((entry) => /^T=/.test(entry.command))
  return start === -1 ? commands : commands.slice(start)
}

/**
 * One bash script that runs the commands in order in one shell (so variables carry over, as for a
 * reader pasting them), printing a marker before each, with `T` pointed at the test server.
 */
export function scriptOf(commands: readonly DocCommand[], url: string): string {
  return commands
    .map((entry, index) => {
      const command = /^T=/.test(entry.command) ? `T=${url}` : entry.command
      return `printf '\\n@@@%s\\n' ${index}\n${command}`
    })
    .join('\n')
}

/** The output of each command of a script's run, by its index. */
export function outputsOf(stdout: string): string[] {
  const outputs: string[] = []
  for (const part of stdout
    .split(/\n@@@(\d+)\n/)
    .slice(1)
    .reduce<string[][]>((pairs, item, index, all) => {
      if (index % 2 === 0) pairs.push([item, all[index + 1] ?? ''])
      return pairs
    }, [])) {
    outputs[Number(part[0])] = part[1] as string
  }
  return outputs
}

/**
 * The variables of the `… npm start` line of a document's shell blocks (what the examples' server is
 * started with), or none when it starts with the defaults.
 */
export function serverEnvOf(file: URL): Record<string, string> {
  const start = readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => /^((?:[A-Z][A-Z0-9_]*=\S+\s+)+)npm start\s*$/.exec(line.trim()))
    .find((match) => match !== null)
  if (!start?.[1]) return {}
  return Object.fromEntries(
    start[1]
      .trim()
      .split(/\s+/)
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  )
}
