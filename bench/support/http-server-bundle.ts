import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

/**
 * bench/support/http-server.ts as one esbuild bundle, as `npm start` runs dist/node.js, not through tsx
 * (whose per-file transform wraps every function it creates in a naming helper). Written inside
 * node_modules so the packages it leaves external resolve as they do for dist/. Answers its path.
 */
export async function buildHttpServerBundle(name: string): Promise<string> {
  const outfile = fileURLToPath(new URL(`../../node_modules/.cache/toolport-bench/${name}.mjs`, import.meta.url))
  await build({
    entryPoints: [fileURLToPath(new URL('http-server.ts', import.meta.url))],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  })
  return outfile
}
