// Types for scripts/build-targets.mjs, so tests can import the build functions.
import type { BuildResult } from 'esbuild'

/** dist/node.js, dist/cli.js and their worker entries, with dynamically imported modules in chunks/. */
export declare function buildNode(options?: { outdir?: string }): Promise<BuildResult>
export declare const lambdaExternals: string[]
/** The Lambda build's mainFields: ES module builds first (the bare handler of bench/cold-start.ts uses them too). */
export declare const lambdaMainFields: string[]
export declare function buildLambda(options?: {
  outdir?: string
  copyExternals?: boolean
  /** Put dynamically imported modules in chunks/*.mjs beside index.mjs (default true; false: one file). */
  split?: boolean
}): Promise<BuildResult<{ metafile: true }>>
export declare function buildWorker(options?: { outdir?: string }): Promise<BuildResult<{ metafile: true }>>
