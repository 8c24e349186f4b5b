// Writes openapi/openapi.json from the catalog; a test fails when the committed copy is stale.
import { mkdir, writeFile } from 'node:fs/promises'
import { renderCommittedOpenApi } from '../src/runtimes/committed-openapi'

await mkdir('openapi', { recursive: true })
await writeFile('openapi/openapi.json', await renderCommittedOpenApi())
console.log('wrote openapi/openapi.json')
