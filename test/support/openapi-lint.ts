import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * Lints an OpenAPI document with Redocly's CLI and the repository's rules (the same check `npm test`
 * runs on the committed document). Resolves with the CLI's output when the document has errors.
 */
export async function openApiLintErrors(document: unknown): Promise<string | undefined> {
  const folder = await mkdtemp(join(tmpdir(), 'toolport-openapi-'))
  try {
    const file = join(folder, 'openapi.json')
    await writeFile(file, JSON.stringify(document))
    const root = new URL('../../', import.meta.url).pathname
    return await new Promise((resolve) => {
      execFile(
        join(root, 'node_modules/.bin/redocly'),
        ['lint', file, '--config', join(root, 'redocly.yaml'), '--format', 'stylish'],
        { env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' }, timeout: 120_000 },
        (error, stdout, stderr) => resolve(error ? `${stdout}\n${stderr}` : undefined),
      )
    })
  } finally {
    await rm(folder, { recursive: true, force: true })
  }
}
