import { execFile } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { gzipSync } from 'node:zlib'
import { build, type Metafile } from 'esbuild'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildLambda } from '../../scripts/build-targets.mjs'

// The Lambda bundle as deployed: does it load and answer outside the repo, and what does a cold
// start cost next to a bare Hono handler? The numbers are printed, not asserted (they vary with the
// machine); docs/deploy.md quotes them.
const run = promisify(execFile)
let folder: string
let metafile: Metafile
const env = {
  TOOLPORT_S3_BUCKET: 'toolport-bundle-test',
  TOOLPORT_S3_REGION: 'us-east-1',
  TOOLPORT_API_KEYS: 'bundle=bundle-test-key-0123456789',
  TOOLPORT_LOG_LEVEL: 'silent',
  AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
  AWS_SECRET_ACCESS_KEY: 'example',
}

// Runs in a fresh node: import the bundle (init included), then one /healthz invocation.
const probe = `
const started = performance.now()
const bundle = await import(process.argv[1])
const imported = performance.now()
const event = { version: '2.0', rawPath: '/healthz', rawQueryString: '', headers: { host: 'x.lambda-url.us-east-1.on.aws' },
  requestContext: { domainName: 'x.lambda-url.us-east-1.on.aws', http: { method: 'GET', path: '/healthz' } }, isBase64Encoded: false }
const result = await bundle.handler(event, {})
const answered = performance.now()
console.log(JSON.stringify({ importMs: imported - started, firstCallMs: answered - imported, status: result.statusCode,
  body: result.body, streaming: typeof bundle.streamingHandler }))
`

async function coldStart(file: string, extraEnv: Record<string, string> = {}) {
  const runs = []
  for (let index = 0; index < 3; index++) {
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', probe, file], {
      cwd: folder,
      env: { PATH: process.env.PATH, TMPDIR: folder, ...env, ...extraEnv },
    })
    runs.push(JSON.parse(stdout.trim().split('\n').at(-1) as string))
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[1] as number
  return {
    ...runs[0],
    importMs: Math.round(median(runs.map((entry) => entry.importMs))),
    firstCallMs: Math.round(median(runs.map((entry) => entry.firstCallMs))),
  }
}

async function sizes(file: string) {
  const bytes = await readFile(file)
  return { kB: Math.round(bytes.byteLength / 1024), gzipKB: Math.round(gzipSync(bytes).byteLength / 1024) }
}

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'toolport-lambda-bundle-'))
  const built = await buildLambda({ outdir: join(folder, 'toolport'), copyExternals: false })
  metafile = built.metafile
  await build({
    stdin: {
      contents:
        "import { Hono } from 'hono'\nimport { handle } from 'hono/aws-lambda'\nconst app = new Hono()\napp.get('/healthz', (c) => c.json({ status: 'ok' }))\nexport const handler = handle(app)\n",
      resolveDir: process.cwd(),
      loader: 'ts',
    },
    outfile: join(folder, 'bare', 'index.mjs'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify: true,
    logLevel: 'warning',
  })
}, 120_000)

afterAll(async () => {
  if (folder) await rm(folder, { recursive: true, force: true })
})

describe('Lambda bundle', () => {
  it('is an ESM entry with its lazily loaded chunks and the Swagger UI assets beside it, and no node_modules', async () => {
    expect((await readdir(join(folder, 'toolport'))).sort()).toEqual([
      'chunks',
      'docs-assets',
      'index.mjs',
      'index.mjs.map',
    ])
    expect((await readdir(join(folder, 'toolport', 'docs-assets'))).sort()).toEqual([
      'swagger-ui-bundle.js',
      'swagger-ui.css',
    ])
    expect((await stat(join(folder, 'toolport', 'index.mjs'))).isFile()).toBe(true)
  })

  it('leaves out of the entry and its static imports what a cold start serving files never runs', () => {
    const outputs = metafile.outputs
    const entry = Object.keys(outputs).find((name) => name.endsWith('/index.mjs')) as string
    // The files node compiles at import: the entry and the chunks it imports statically, transitively.
    const compiled = new Set<string>()
    for (const pending = [entry]; pending.length > 0; ) {
      const name = pending.pop() as string
      if (compiled.has(name)) continue
      compiled.add(name)
      for (const imported of outputs[name]?.imports ?? []) {
        if (imported.kind === 'import-statement' && outputs[imported.path]) pending.push(imported.path)
      }
    }
    const inputs = [...compiled].flatMap((name) => Object.keys(outputs[name]?.inputs ?? {}))
    expect(inputs).toContain('src/tools/files/read.ts')
    const onFirstUse = [
      /node_modules\/jose\//,
      /node_modules\/@aws-sdk\/lib-storage\//,
      /node_modules\/@aws-sdk\/s3-request-presigner\//,
      /node_modules\/image-size\//,
      /node_modules\/puppeteer-core\//,
      /^src\/browser\/session\/session\.ts$/,
    ]
    expect(inputs.filter((input) => onFirstUse.some((pattern) => pattern.test(input)))).toEqual([])
  })

  it('gives the names the code takes from a package it imports on first use', async () => {
    // A chunk made from a CommonJS build exports only `default`: `const { Upload } = await import(…)`
    // would then be undefined, which only the call that needs it would find out.
    const named: Record<string, string> = {
      '@aws-sdk/lib-storage': 'Upload',
      '@aws-sdk/s3-request-presigner': 'getSignedUrl',
      '@aws-sdk/client-lambda': 'LambdaClient',
      '@aws-sdk/client-ssm': 'SSMClient',
      '@aws-sdk/client-secrets-manager': 'SecretsManagerClient',
      'pdf-lib': 'PDFDocument',
      jose: 'jwtVerify',
      'image-size': 'imageSize',
      // Only a CommonJS build for Node: its chunk has `default` alone, which sources/yaml.ts reads.
      yaml: 'default.parse',
    }
    const chunks = Object.entries(named).map(([name, exported]) => {
      const output = Object.entries(metafile.outputs).find(([, entry]) =>
        entry.entryPoint?.startsWith(`node_modules/${name}/`),
      )
      expect(output, name).toBeDefined()
      return [join(process.cwd(), (output as [string, unknown])[0]), exported]
    })
    const script = `const found = []
for (const [file, name] of JSON.parse(process.argv[1])) found.push(typeof name.split('.').reduce((value, key) => value?.[key], await import(file)))
console.log(JSON.stringify(found))`
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(chunks)], {
      cwd: folder,
      env: { PATH: process.env.PATH, TMPDIR: folder, ...env },
    })
    expect(JSON.parse(stdout.trim().split('\n').at(-1) as string)).toEqual(chunks.map(() => 'function'))
  }, 120_000)

  it('loads every chunk outside the repository: nothing a later call imports is missing', async () => {
    const chunks = (await readdir(join(folder, 'toolport', 'chunks'))).filter((name) => name.endsWith('.mjs'))
    expect(chunks.length).toBeGreaterThan(3)
    const script = `for (const file of process.argv.slice(1)) await import(file); console.log('loaded')`
    const { stdout } = await run(
      process.execPath,
      ['--input-type=module', '-e', script, ...chunks.map((name) => join(folder, 'toolport', 'chunks', name))],
      { cwd: folder, env: { PATH: process.env.PATH, TMPDIR: folder, ...env } },
    )
    expect(stdout.trim()).toBe('loaded')
  }, 120_000)

  it('loads outside the repository, answers /healthz, and measures cold start against bare Hono', async () => {
    const toolport = await coldStart(join(folder, 'toolport', 'index.mjs'))
    expect(toolport).toMatchObject({ status: 200, streaming: 'undefined' })
    expect(JSON.parse(toolport.body)).toEqual({ status: 'ok' })
    const bare = await coldStart(join(folder, 'bare', 'index.mjs'))
    expect(bare.status).toBe(200)

    const rows = [
      ['toolport', await sizes(join(folder, 'toolport', 'index.mjs')), toolport],
      ['bare Hono', await sizes(join(folder, 'bare', 'index.mjs')), bare],
    ] as const
    const lines = rows.map(
      ([name, size, timing]) =>
        `${name.padEnd(10)} ${String(size.kB).padStart(6)} kB (${String(size.gzipKB).padStart(5)} kB gzip)  import+init ${String(timing.importMs).padStart(5)} ms  first call ${String(timing.firstCallMs).padStart(4)} ms`,
    )
    const ratio = (toolport.importMs / Math.max(bare.importMs, 1)).toFixed(1)
    console.log(
      `Lambda cold start (median of 3, node ${process.version}):\n${lines.join('\n')}\nimport ratio ${ratio}x`,
    )
  }, 120_000)
})
