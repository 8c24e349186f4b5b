// Types for scripts/build-targets.mjs, so tests can import the build functions.
import type { BuildResult } from 'esbuild'

export declare const lambdaExternals: string[]
export declare function buildLambda(options?: {
  outdir?: string
  copyExternals?: boolean
}): Promise<BuildResult<{ metafile: true }>>
export declare function buildWorker(options?: { outdir?: string }): Promise<BuildResult<{ metafile: true }>>
