// Bundles the Node entry point into dist/node.js; packages stay external and load from node_modules.
import { build } from 'esbuild'

await build({
  entryPoints: { node: 'src/runtimes/node.ts' },
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
})
