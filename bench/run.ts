// `npm run bench` runs every benchmark; `npm run bench -- NAME` runs one (e.g. sandbox).
import { readdir } from 'node:fs/promises'

const folder = new URL('.', import.meta.url)
const wanted = process.argv[2]
const benchmarks = (await readdir(folder))
  .filter((name) => name.endsWith('.ts') && !['run.ts', 'stats.ts'].includes(name))
  .map((name) => name.slice(0, -3))
  .filter((name) => !wanted || name === wanted)
if (benchmarks.length === 0) throw new Error(`no benchmark named ${wanted}`)
console.log(`# toolport benchmarks — Node ${process.version}, ${new Date().toISOString()}`)
for (const name of benchmarks) await import(new URL(`${name}.ts`, folder).href)
