import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

/**
 * bench/support/http-server.ts as one esbuild bundle, as `npm start` runs dist/node.js, not through tsx
 * (whose per-file transform wraps every function it creates in a naming helper), with the trace export
 * worker beside it as dist/ has it. Written inside node_modules so the packages it leaves external
 * resolve as they do for dist/. Answers the server's path.
 */
export async function buildHttpServerBundle(name: string): Promise<string> {
  const outdir = fileURLToPath(new URL('../../node_modules/.cache/toolport-bench/', import.meta.url))
  await build({
    entryPoints: {
      [name]: fileURLToPath(new URL('http-server.ts', import.meta.url)),
      'otel-export-worker': fileURLToPath(new URL('../../src/runtimes/otel-export-worker.ts', import.meta.url)),
    },
    outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  })
  return `${outdir}${name}.mjs`
}
