// The bundles: the Node server (dist/node.js), AWS Lambda (dist/lambda) and Cloudflare Workers (dist/worker).
import { existsSync } from 'node:fs'
import { cp, mkdir, readFile, rm } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { build } from 'esbuild'

const require = createRequire(import.meta.url)
const docsAssets = ['swagger-ui.css', 'swagger-ui-bundle.js']
// Ships a Chromium binary and finds it next to its own files: it cannot live inside a bundle.
export const lambdaExternals = ['@sparticuz/chromium']

async function copyDocsAssets(target) {
  const source = dirname(require.resolve('swagger-ui-dist/package.json'))
  await mkdir(target, { recursive: true })
  for (const name of docsAssets) await cp(join(source, name), join(target, name))
}

/** Where Node would find package `name` from `from`: the nearest node_modules/<name> upwards. */
function findPackage(name, from) {
  for (let folder = from; ; folder = dirname(folder)) {
    const candidate = join(folder, 'node_modules', name)
    if (existsSync(join(candidate, 'package.json'))) return candidate
    if (dirname(folder) === folder) return undefined
  }
}

/** Copies a package and its production dependencies, as installed, into target/node_modules. */
async function copyPackage(name, target, from = process.cwd(), seen = new Set()) {
  const folder = findPackage(name, from)
  // Missing: an optional dependency that is not installed on this platform.
  if (!folder || seen.has(folder)) return
  seen.add(folder)
  await cp(folder, join(target, 'node_modules', name), { recursive: true, dereference: true })
  const manifest = JSON.parse(await readFile(join(folder, 'package.json'), 'utf8'))
  const { dependencies = {}, optionalDependencies = {} } = manifest
  for (const dependency of Object.keys({ ...dependencies, ...optionalDependencies })) {
    await copyPackage(dependency, target, folder, seen)
  }
}

/**
 * The Node server and the `toolport` command, with the worker entries they start; packages stay
 * external and load from node_modules.
 *
 * Split as the Lambda bundle is: each `await import()` (the Office writers, pdf-lib with fontkit,
 * Chromium, the shell parser, the MCP SDK, page extraction, the AWS SDK for a bucket) becomes a chunk in
 * chunks/ whose packages load with it. In a single file esbuild hoists every package import to its top,
 * so a server that only ever serves file tools loaded them all at start (idle RSS: bench/load-memory.ts;
 * what loads when: docs/deploy.md). Stale chunks of earlier builds are left in place rather than removed:
 * a service started from dist/ may still import them.
 */
export async function buildNode({ outdir = 'dist' } = {}) {
  return build({
    // policy-worker: the command policy's parser runs in a worker thread (src/sandbox/policy/command-lister.ts);
    // offload-worker: so does the tools' CPU-heavy work (src/runtimes/offload-pool.ts);
    // otel-export-worker: the OpenTelemetry spans replayed, batched, encoded and sent (src/runtimes/otel-worker-sink.ts).
    entryPoints: {
      node: 'src/runtimes/node.ts',
      cli: 'src/cli/main.ts',
      'policy-worker': 'src/sandbox/policy/policy-worker.ts',
      'offload-worker': 'src/runtimes/offload-worker.ts',
      'otel-export-worker': 'src/runtimes/otel-export-worker.ts',
    },
    outdir,
    bundle: true,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: true,
    logLevel: 'warning',
  })
}

/**
 * zod's `locales` namespace (z.locales: the error messages of 40-odd languages, 267 KB minified, more
 * than half of zod in a bundle) keeps only `en`. zod re-exports the namespace from its index, and
 * @hono/zod-openapi hands the whole `z` namespace to zod-to-openapi, so no bundler can tree-shake it;
 * toolport's messages are zod's default English (set by zod from locales/en.js, which stays), and
 * nothing calls z.config with another locale. Every module of it was compiled at each cold start.
 */
const zodEnglishOnly = replacedModule(
  'toolport-zod-english-only',
  /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/,
  'export { default as en } from "./en.js"',
  'js',
)

/** An esbuild plugin that bundles `contents` in place of every module whose path matches `filter`. */
function replacedModule(name, filter, contents, loader) {
  return {
    name,
    setup(builder) {
      builder.onLoad({ filter }, () => ({ contents, loader }))
    },
  }
}

/**
 * A package's ES module build before its CommonJS one (esbuild's default for Node is the reverse), for
 * packages that choose by these fields rather than by `exports`: the AWS SDK clients, lib-storage, the
 * presigner, pdf-lib. As CommonJS, the S3 client came whole (every command of it) and ran in esbuild's
 * CommonJS wrappers at each cold start, and a chunk that `await import()` loads exported only `default`,
 * so the named exports the code takes from it (LambdaClient, getSignedUrl, PDFDocument) were undefined.
 * As ES modules the client is tree-shaken, its credential providers load on first use, and chunks
 * export their names. About a fifth of a cold read_file (bench/cold-start.ts).
 */
export const lambdaMainFields = ['module', 'main']

/**
 * One ESM entry file with every dependency inside, AWS SDK included (the runtime's copy is a version
 * we do not control).
 *
 * `split: true` (the default) lets esbuild put each `await import()` (Chromium, the Office writers,
 * pdf-lib with fontkit, the shell parser, the SSM/Secrets Manager/Lambda clients) in chunks/*.mjs
 * beside the entry, so a cold start reads and compiles only what the first call needs: in one 9-10 MB
 * file, node's compile of code that call never runs was about half of a read_file cold start (CPU
 * profile: compileSourceTextModule + the UTF-8 decode of the source). `split: false` gives the single
 * file. Both layouts deploy the same way (the whole folder is the function's code).
 */
export async function buildLambda({ outdir = 'dist/lambda', copyExternals = true, split = true } = {}) {
  await rm(outdir, { recursive: true, force: true })
  const result = await build({
    entryPoints: { index: 'src/runtimes/lambda.ts' },
    outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: split,
    // A folder of their own keeps the function's top level readable; the entry stays index.mjs.
    chunkNames: 'chunks/[name]-[hash]',
    platform: 'node',
    mainFields: lambdaMainFields,
    format: 'esm',
    target: 'node20',
    minify: true,
    // No keepNames: its __name call for every function and class bundled was about a tenth of a cold
    // start's import (bench/cold-start.ts); error classes set their own names.
    keepNames: false,
    sourcemap: 'linked',
    external: lambdaExternals,
    plugins: [zodEnglishOnly],
    // CommonJS dependencies call require() for Node built-ins; ESM has no require of its own.
    banner: {
      js: "import { createRequire as __toolportRequire } from 'node:module';const require = __toolportRequire(import.meta.url);",
    },
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
  })
  await copyDocsAssets(join(outdir, 'docs-assets'))
  // Copy only the externals the bundle really imports: none until a tool uses Chromium.
  const imported = new Set(
    Object.values(result.metafile.outputs).flatMap((output) =>
      output.imports.filter((entry) => entry.external).map((entry) => entry.path),
    ),
  )
  for (const name of lambdaExternals) {
    if (copyExternals && [...imported].some((path) => path === name || path.startsWith(`${name}/`))) {
      await copyPackage(name, resolve(outdir))
    }
  }
  // The PDF fonts are found with require.resolve at run time, which esbuild cannot follow: ship them.
  if (copyExternals) await copyPackage('dejavu-fonts-ttf', resolve(outdir))
  return result
}

// The Worker serves its own catalog (src/runtimes/worker-service.ts); the full catalog still reaches
// the bundle through createApp's default. Its Node-only families are replaced by empty lists so
// their packages (exceljs, docx, pptxgenjs: node:stream, fs) never enter the Worker.
const nodeOnlyFamilies = replacedModule(
  'toolport-node-only-families',
  /[\\/]src[\\/]tools[\\/]documents[\\/]index\.ts$/,
  'export const documentTools = []',
  'ts',
)

/**
 * The Worker: bundled for workerd (browser-style package entry points, node: built-ins left to the
 * nodejs_compat flag); wrangler.toml points at it. Swagger UI goes to the static assets folder.
 */
export async function buildWorker({ outdir = 'dist/worker' } = {}) {
  await rm(outdir, { recursive: true, force: true })
  const result = await build({
    entryPoints: { index: 'src/runtimes/worker.ts' },
    outdir,
    bundle: true,
    platform: 'neutral',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['browser', 'module', 'main'],
    format: 'esm',
    target: 'es2022',
    minify: true,
    keepNames: true,
    sourcemap: 'linked',
    external: ['node:*', 'cloudflare:*'],
    plugins: [nodeOnlyFamilies, zodEnglishOnly],
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
  })
  await copyDocsAssets(join(outdir, 'assets', 'docs', 'assets'))
  return result
}
