// Sandbox overhead: a sandboxed `true` against a plain spawn and a bare bwrap, measured in one run.
import { spawn } from 'node:child_process'
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config'
import { silentLogger } from '../src/log'
import { setupShell } from '../src/sandbox/setup'
import { createMemoryStorage } from '../src/storage/memory'
import { toolNames } from '../src/tools/index'
import { printTable, summarize } from './stats'

const iterations = Number(process.env.BENCH_ITERATIONS ?? 60)

function spawnTrue(file: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: 'ignore' })
    child.once('error', reject)
    child.once('exit', () => resolve())
  })
}

async function time(run: () => Promise<unknown>): Promise<number[]> {
  await run() // warm-up
  const samples: number[] = []
  for (let index = 0; index < iterations; index++) {
    const started = performance.now()
    await run()
    samples.push(performance.now() - started)
  }
  return samples
}

const work = await mkdtemp(join(tmpdir(), 'toolport-bench-'))
// The sandbox user must be able to reach the work folder.
await chmod(work, 0o711)
try {
  const config = loadConfig({ TOOLPORT_WORK_DIR: join(work, 'work') }, { toolNames })
  const { shell, problem } = await setupShell(config, process.env, silentLogger)
  if (!shell) throw new Error(`no sandbox: ${problem}`)
  const storage = createMemoryStorage()
  const bareBwrap = [
    '--unshare-all',
    '--die-with-parent',
    '--ro-bind',
    '/usr',
    '/usr',
    '--symlink',
    'usr/bin',
    '/bin',
    '--symlink',
    'usr/lib',
    '/lib',
    '--symlink',
    'usr/lib64',
    '/lib64',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '/bin/true',
  ]
  const plain = summarize(await time(() => spawnTrue('/bin/true', [])))
  const bwrap = summarize(await time(() => spawnTrue('bwrap', bareBwrap)))
  const toolport = summarize(
    await time(() =>
      shell.execute({
        storage,
        workspacePrefix: 'tenants/bench/workspaces/empty/',
        command: 'true',
        cwd: '',
        timeoutMs: 10_000,
        signal: new AbortController().signal,
      }),
    ),
  )
  printTable('sandbox: `true`, empty workspace', [
    { name: 'plain spawn(true)', stats: plain },
    { name: 'bare bwrap … true', stats: bwrap },
    { name: 'toolport sandbox (limits, cgroups, sync)', stats: toolport, baseline: bwrap, target: 3 },
  ])
} finally {
  await rm(work, { recursive: true, force: true })
}
