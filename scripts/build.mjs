// Bundles the Node entry point into dist/node.js and the `toolport` command into dist/cli.js;
// packages stay external and load from node_modules.
import { build } from 'esbuild'
import { buildLambda, buildWorker } from './build-targets.mjs'

await build({
  // policy-worker: the command policy's parser runs in a worker thread (src/sandbox/policy/command-lister.ts);
  // offload-worker: so does the tools' CPU-heavy work (src/runtimes/offload-pool.ts).
  entryPoints: {
    node: 'src/runtimes/node.ts',
    cli: 'src/cli/main.ts',
    'policy-worker': 'src/sandbox/policy/policy-worker.ts',
    'offload-worker': 'src/runtimes/offload-worker.ts',
  },
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
})

// The serverless bundles (dist/lambda, dist/worker): `node scripts/build.mjs node` skips them.
const targets = process.argv.slice(2)
if (targets.length === 0 || targets.includes('lambda')) await buildLambda()
if (targets.length === 0 || targets.includes('worker')) await buildWorker()
