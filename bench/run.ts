// `npm run bench` runs every benchmark and writes bench/RESULTS.md; `npm run bench -- NAME` runs one
// (e.g. sandbox) and only prints.
import { execFileSync } from 'node:child_process'
import { readdir, writeFile } from 'node:fs/promises'
import { cpus, totalmem } from 'node:os'
import { notes, tables } from './stats'

const folder = new URL('.', import.meta.url)
const wanted = process.argv[2]
const benchmarks = (await readdir(folder))
  .filter((name) => name.endsWith('.ts') && !['run.ts', 'stats.ts'].includes(name))
  .map((name) => name.slice(0, -3))
  .filter((name) => !wanted || name === wanted)
if (benchmarks.length === 0) throw new Error(`no benchmark named ${wanted}`)
const started = new Date().toISOString()
const nproc = (() => {
  try {
    return execFileSync('nproc', { encoding: 'utf8' }).trim()
  } catch {
    return String(cpus().length)
  }
})()
const machine = `${nproc} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB memory`
console.log(`# toolport benchmarks — Node ${process.version}, ${machine}, ${started}`)
const failed: string[] = []
for (const name of benchmarks) {
  try {
    await import(new URL(`${name}.ts`, folder).href)
  } catch (error) {
    // One broken benchmark must not lose the others' tables.
    console.error(`benchmark ${name} failed:`, error)
    failed.push(name)
  }
}
if (!wanted) {
  const text = [
    '# toolport benchmark results',
    '',
    'Written by `npm run bench`; every ratio compares toolport with a baseline measured in the same run.',
    'Warm-up calls are excluded from every figure (each benchmark says how many it discards).',
    '',
    `- machine: ${machine}`,
    `- Node: ${process.version}`,
    `- date: ${started}`,
    ...(failed.length ? [`- failed to run: ${failed.join(', ')}`] : []),
    '',
    ...tables.flatMap((table) => [`## ${table.title}`, '', ...table.lines, '']),
    ...(notes.length ? ['## Notes', '', ...notes.map((text) => `- ${text}`), ''] : []),
  ].join('\n')
  await writeFile(new URL('RESULTS.md', folder), text)
  console.log('\nwrote bench/RESULTS.md')
}
if (failed.length) process.exitCode = 1
