// Bundles the Node entry point into dist/node.js and the `toolport` command into dist/cli.js, with the
// modules they import on first use in dist/chunks/; packages stay external and load from node_modules.
import { buildLambda, buildNode, buildWorker } from './build-targets.mjs'

await buildNode()

// The serverless bundles (dist/lambda, dist/worker): `node scripts/build.mjs node` skips them.
const targets = process.argv.slice(2)
if (targets.length === 0 || targets.includes('lambda')) await buildLambda()
if (targets.length === 0 || targets.includes('worker')) await buildWorker()
