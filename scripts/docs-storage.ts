// Writes the "what is stored where" table of docs/storage.md from src/storage/layout.ts; a test fails
// when the committed copy is stale.
import { readFile, writeFile } from 'node:fs/promises'
import { withLayoutTable } from '../src/storage/layout'

const path = 'docs/storage.md'
await writeFile(path, withLayoutTable(await readFile(path, 'utf8')))
console.log(`wrote the storage layout table of ${path}`)
