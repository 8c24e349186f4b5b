import { type ChildProcess, spawn } from 'node:child_process'
import type { RunCgroup } from './cgroup'

/**
 * The first processes of a bwrap run, started before its run is asked for. Moving a process into a
 * cgroup waits for an RCU grace period in the kernel (cgroup v1 without favordynmods: the threadgroup
 * lock's writer side), measured here at about 9 ms of a 22 ms `true` (bench/sandbox.ts), and each
 * program on the way to bwrap is an exec. So a run's cgroups are made and joined ahead, and so is
 * what does not depend on the run: the drop to the sandbox user (as root), and, where runs may take an
 * overlay, the user and mount namespace it is mounted in. The last program, a shell, then waits on
 * descriptor 9 for the rest, which a run sends as shell lines (its overlay mount, if any, and one quoted
 * `set --` of prlimit and bwrap), its bwrap options and files on descriptors 3 to 8 as before. A start
 * nobody takes exits when its descriptor closes, which the service's exit also does.
 */
export interface WarmStart {
  child: ChildProcess
  cgroup: RunCgroup | undefined
}

/** Descriptors 3 to 8 carry bwrap's options and files (bwrap-arguments.ts uses up to six). */
export const inputSlots = 6
const programFd = 3 + inputSlots

/**
 * The first program: joins the cgroups named before `--` (exit 125: the run must not start outside its
 * limits), then runs the rest. A shell exports PWD into what it runs: unset, so that bwrap (whose
 * environment /proc/1/environ shows inside) starts with none.
 */
const joinCgroupsScript =
  'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; unset PWD OLDPWD; exec "$@"'

// The waiting shell: all lines up to the end of descriptor 9, kept with their line breaks (a command may
// hold some), then evaluated; an empty program is a start given up.
const waitScript = [
  'program=',
  `while IFS= read -r line <&${programFd} || [ -n "$line" ]; do program="$program$line\n"; done`,
  '[ -n "$program" ] || exit 0',
  `exec ${programFd}<&-`,
  'eval "$program"',
  'unset PWD OLDPWD program line',
  'exec "$@"',
].join('\n')

/** One word for the shell, whatever bytes it holds. */
export function quoted(word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`
}

/**
 * What a run writes to a start: its bwrap inputs in descriptors 3…, and on descriptor 9 the program:
 * empty slots closed, the run's own lines, then argv. Undefined when the inputs do not fit.
 */
export function startInputs(
  lines: readonly string[],
  argv: readonly string[],
  inputs: readonly Uint8Array[],
): Uint8Array[] | undefined {
  if (inputs.length > inputSlots) return undefined
  const unused = Array.from(
    { length: inputSlots - inputs.length },
    (_, index) => `exec ${3 + inputs.length + index}<&-`,
  )
  const program = [...unused, ...lines, `set -- ${argv.map(quoted).join(' ')}`].join('\n')
  const empty = new Uint8Array(0)
  return [
    ...inputs,
    ...Array.from({ length: inputSlots - inputs.length }, () => empty),
    new TextEncoder().encode(`${program}\n`),
  ]
}

/** Starts the chain: joined to `cgroup`'s groups, through `prefix`, to a shell that waits for its program. */
function spawnStart(cgroup: RunCgroup | undefined, prefix: readonly string[]): ChildProcess {
  const wait = ['/bin/sh', '-c', waitScript, 'sh']
  return spawn('/bin/sh', ['-c', joinCgroupsScript, 'sh', ...(cgroup?.procsFiles ?? []), '--', ...prefix, ...wait], {
    env: {},
    cwd: '/',
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe', ...Array.from({ length: inputSlots + 1 }, () => 'pipe' as const)],
  })
}

function alive(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null && child.pid !== undefined
}

/**
 * Keeps two starts ready, made again after each run: a run that follows another at once (a client's
 * next command, a queued call) takes the start made the run before, which has had a whole run to join its
 * cgroups and reach its wait, instead of one spawned a moment ago. Making them after runs rather than
 * during them keeps their processes off the cores while a run starts. `prefix` runs before the wait.
 */
export function createWarmStarts(
  newCgroup: () => Promise<RunCgroup | undefined>,
  prefix: readonly string[],
  depth = 2,
) {
  const ready: Promise<WarmStart>[] = []
  let closed = false

  async function make(): Promise<WarmStart> {
    const cgroup = await newCgroup()
    try {
      const child = spawnStart(cgroup, prefix)
      child.on('error', () => {})
      return { child, cgroup }
    } catch (error) {
      await cgroup?.remove()
      throw error
    }
  }

  /** An idle start does not keep the process alive, nor do its pipes. */
  function idle(start: WarmStart): WarmStart {
    start.child.unref()
    for (const stream of start.child.stdio) (stream as { unref?: () => void } | null)?.unref?.()
    return start
  }

  function busy(start: WarmStart): WarmStart {
    start.child.ref()
    for (const stream of start.child.stdio) (stream as { ref?: () => void } | null)?.ref?.()
    return start
  }

  async function discard(start: WarmStart): Promise<void> {
    try {
      if (start.child.pid !== undefined) process.kill(-start.child.pid, 'SIGKILL')
    } catch {}
    for (const stream of start.child.stdio) stream?.destroy()
    await start.cgroup?.remove()
  }

  return {
    /** A start for a run: the oldest made ahead when it is still alive, else a new one. */
    async take(): Promise<WarmStart> {
      const start = await ready.shift()?.catch(() => undefined)
      if (start && alive(start.child)) return busy(start)
      if (start) await discard(start)
      return busy(await make())
    },
    /** Makes the next runs' starts, once this one's run is over. */
    refill(): void {
      while (!closed && ready.length < depth) {
        const next = make().then(idle)
        next.catch(() => {})
        ready.push(next)
      }
    },
    /** Ends a taken start whose run could not begin: its processes, its pipes and its cgroups. */
    discard,
    async close(): Promise<void> {
      closed = true
      const waiting = ready.splice(0)
      for (const start of await Promise.all(waiting.map((entry) => entry.catch(() => undefined))))
        if (start) await discard(start)
    },
  }
}
