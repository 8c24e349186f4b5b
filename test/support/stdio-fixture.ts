import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build } from 'esbuild'

export interface StdioFixture {
  /** Host folder holding server.mjs, to mount read-only into the sandbox. */
  folder: string
  remove(): Promise<void>
}

/**
 * Bundles a stdio MCP fixture server (a file in test/fixtures, by default the sources suites'
 * mcp-stdio-server.ts) into one server.mjs (the sandbox sees /usr, not node_modules), in a folder the
 * sandbox user can read.
 */
export async function bundleStdioFixture(entry = 'mcp-stdio-server.ts'): Promise<StdioFixture> {
  const folder = await mkdtemp(join(tmpdir(), 'toolport-mcp-fixture-'))
  await build({
    entryPoints: [new URL(`../fixtures/${entry}`, import.meta.url).pathname],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: join(folder, 'server.mjs'),
    logLevel: 'silent',
  })
  await chmod(folder, 0o755)
  await chmod(join(folder, 'server.mjs'), 0o644)
  return { folder, remove: () => rm(folder, { recursive: true, force: true }) }
}

/** Bundles a fixture (a file in test/fixtures) into `folder`/`file`, readable by the sandbox user. */
export async function bundleFixtureInto(entry: string, folder: string, file: string): Promise<void> {
  await build({
    entryPoints: [new URL(`../fixtures/${entry}`, import.meta.url).pathname],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: join(folder, file),
    logLevel: 'silent',
    // exceljs and its dependencies are CommonJS that require Node's built-ins.
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
  })
  await chmod(folder, 0o755)
  await chmod(join(folder, file), 0o644)
}
