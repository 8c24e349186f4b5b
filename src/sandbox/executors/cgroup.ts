import { randomUUID } from 'node:crypto'
import { access, mkdir, readFile, rmdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

/**
 * Per-run control groups: a memory and a process-count limit for everything a sandboxed command
 * starts. cgroup v2 (one unified tree) is what current hosts have; v1 (one tree per controller, as on
 * hybrid hosts without systemd) is supported too. Where neither can be written, the executor falls
 * back to rlimits and /readyz says so.
 */
export interface CgroupLimits {
  memoryBytes: number
  pids: number
}

export interface RunCgroup {
  /** cgroup.procs files the sandbox's first process must join before it starts the command. */
  procsFiles: string[]
  /** Why the run stopped, when a limit fired: 'memory' or 'processes'. */
  limitHit(): Promise<string | undefined>
  /** What the run used, as far as the kernel counts it here (read before remove). */
  usage(): Promise<RunUsage>
  /** Kills whatever is left and removes the groups. */
  remove(): Promise<void>
}

/** CPU time and peak memory of everything a run started (usage per tenant, docs/operations.md#usage). */
export interface RunUsage {
  cpuSeconds?: number
  peakMemoryBytes?: number
}

/** A counter file's number, or undefined where the kernel has no such file. */
async function readNumber(path: string, pattern?: RegExp): Promise<number | undefined> {
  const text = await readFile(path, 'utf8').catch(() => undefined)
  if (text === undefined) return undefined
  const value = Number(pattern ? pattern.exec(text)?.[1] : text.trim())
  return Number.isFinite(value) ? value : undefined
}

export interface CgroupManager {
  readonly version: 'v1' | 'v2'
  describe(limits: CgroupLimits): Record<string, string>
  create(limits: CgroupLimits): Promise<RunCgroup>
}

const cgroupRoot = '/sys/fs/cgroup'

async function writable(path: string): Promise<boolean> {
  return access(path, 2 /* W_OK */).then(
    () => true,
    () => false,
  )
}

/** The process's own path in each hierarchy, from /proc/self/cgroup ("id:controllers:path"). */
async function ownPaths(): Promise<Map<string, string>> {
  const text = await readFile('/proc/self/cgroup', 'utf8')
  const paths = new Map<string, string>()
  for (const line of text.trim().split('\n')) {
    const [, controllers = '', path = '/'] = line.split(':')
    for (const controller of controllers === '' ? ['unified'] : controllers.split(',')) paths.set(controller, path)
  }
  return paths
}

async function removeGroup(folder: string): Promise<void> {
  // A group can only be removed once empty; kill stragglers (there should be none once bwrap is dead).
  for (let attempt = 0; attempt < 20; attempt++) {
    const pids = (await readFile(join(folder, 'cgroup.procs'), 'utf8').catch(() => '')).split('\n').filter(Boolean)
    for (const pid of pids) {
      try {
        process.kill(Number(pid), 'SIGKILL')
      } catch {}
    }
    try {
      await rmdir(folder)
      return
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  }
}

async function probeV2(): Promise<CgroupManager | undefined> {
  const controllersFile = join(cgroupRoot, 'cgroup.controllers')
  if (!(await writable(cgroupRoot)) || !(await readFile(controllersFile, 'utf8').catch(() => ''))) return undefined
  const own = (await ownPaths()).get('unified') ?? '/'
  const parent = join(cgroupRoot, own, 'toolport-runs')
  try {
    await mkdir(parent, { recursive: true })
    // Controllers must be enabled for the children of the folder that holds our run groups.
    await writeFile(join(parent, 'cgroup.subtree_control'), '+memory +pids')
  } catch {
    return undefined
  }
  return {
    version: 'v2',
    describe: (limits) => ({
      memory: `cgroup v2 memory.max ${limits.memoryBytes} bytes`,
      processes: `cgroup v2 pids.max ${limits.pids}`,
    }),
    async create(limits) {
      const folder = join(parent, randomUUID())
      await mkdir(folder)
      // The files are independent: written at once, as each is a round trip through libuv's threads.
      await Promise.all([
        writeFile(join(folder, 'memory.max'), String(limits.memoryBytes)),
        writeFile(join(folder, 'memory.swap.max'), '0').catch(() => {}),
        writeFile(join(folder, 'pids.max'), String(limits.pids)),
      ])
      return {
        procsFiles: [join(folder, 'cgroup.procs')],
        async limitHit() {
          const [events, pidEvents] = await Promise.all([
            readFile(join(folder, 'memory.events'), 'utf8').catch(() => ''),
            readFile(join(folder, 'pids.events'), 'utf8').catch(() => ''),
          ])
          if (/^oom_kill [1-9]/m.test(events)) return 'memory'
          return /^max [1-9]/m.test(pidEvents) ? 'processes' : undefined
        },
        async usage() {
          // cpu.stat is in every v2 group; memory.peak since Linux 5.19.
          const [cpu, peak] = await Promise.all([
            readNumber(join(folder, 'cpu.stat'), /^usage_usec (\d+)/m),
            readNumber(join(folder, 'memory.peak')),
          ])
          return {
            ...(cpu !== undefined ? { cpuSeconds: cpu / 1e6 } : {}),
            ...(peak !== undefined ? { peakMemoryBytes: peak } : {}),
          }
        },
        remove: () => removeGroup(folder),
      }
    },
  }
}

async function probeV1(): Promise<CgroupManager | undefined> {
  const own = await ownPaths()
  const memoryParent = join(cgroupRoot, 'memory', own.get('memory') ?? '/', 'toolport-runs')
  const pidsParent = join(cgroupRoot, 'pids', own.get('pids') ?? '/', 'toolport-runs')
  // CPU accounting is a third hierarchy; without it a run's CPU time is simply not counted.
  const cpuParent = join(cgroupRoot, 'cpuacct', own.get('cpuacct') ?? '/', 'toolport-runs')
  try {
    await mkdir(memoryParent, { recursive: true })
    await mkdir(pidsParent, { recursive: true })
  } catch {
    return undefined
  }
  const accounting = await mkdir(cpuParent, { recursive: true }).then(
    () => true,
    () => false,
  )
  return {
    version: 'v1',
    describe: (limits) => ({
      memory: `cgroup v1 memory.limit_in_bytes ${limits.memoryBytes} bytes`,
      processes: `cgroup v1 pids.max ${limits.pids}`,
    }),
    async create(limits) {
      const id = randomUUID()
      const memory = join(memoryParent, id)
      const pids = join(pidsParent, id)
      const cpu = join(cpuParent, id)
      // Three hierarchies, each a round trip through libuv's threads: made at once, then their limits.
      const [counting] = await Promise.all([
        accounting &&
          mkdir(cpu).then(
            () => true,
            () => false,
          ),
        mkdir(memory),
        mkdir(pids),
      ])
      await Promise.all([
        writeFile(join(memory, 'memory.limit_in_bytes'), String(limits.memoryBytes)),
        writeFile(join(pids, 'pids.max'), String(limits.pids)),
      ])
      // Without this, swap would let a run use more than its limit (only present with swap accounting).
      // After the memory limit: the kernel refuses a memsw limit below it.
      await writeFile(join(memory, 'memory.memsw.limit_in_bytes'), String(limits.memoryBytes)).catch(() => {})
      return {
        procsFiles: [
          join(memory, 'cgroup.procs'),
          join(pids, 'cgroup.procs'),
          ...(counting ? [join(cpu, 'cgroup.procs')] : []),
        ],
        async limitHit() {
          const [oom, pidEvents] = await Promise.all([
            readFile(join(memory, 'memory.oom_control'), 'utf8').catch(() => ''),
            readFile(join(pids, 'pids.events'), 'utf8').catch(() => ''),
          ])
          if (/^oom_kill [1-9]/m.test(oom)) return 'memory'
          return /^max [1-9]/m.test(pidEvents) ? 'processes' : undefined
        },
        async usage() {
          const [nanoseconds, peak] = await Promise.all([
            counting ? readNumber(join(cpu, 'cpuacct.usage')) : undefined,
            readNumber(join(memory, 'memory.max_usage_in_bytes')),
          ])
          return {
            ...(nanoseconds !== undefined ? { cpuSeconds: nanoseconds / 1e9 } : {}),
            ...(peak !== undefined ? { peakMemoryBytes: peak } : {}),
          }
        },
        async remove() {
          await Promise.all([removeGroup(memory), removeGroup(pids), ...(counting ? [removeGroup(cpu)] : [])])
        },
      }
    },
  }
}

/** Finds a cgroup hierarchy this process may create groups in; undefined when there is none. */
export async function probeCgroups(): Promise<CgroupManager | undefined> {
  if (process.platform !== 'linux') return undefined
  return (await probeV2()) ?? (await probeV1())
}
