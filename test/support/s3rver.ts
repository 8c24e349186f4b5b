import { type ChildProcess, spawn } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { createS3Storage, type S3StorageOptions } from '../../src/storage/s3'
import type { ObjectStore } from '../../src/storage/store'

/**
 * Runs s3rver (a fake S3 on the local filesystem) as a child process for tests. A child process
 * rather than in-process: tests can kill it to simulate an outage, and its legacy crypto needs
 * --openssl-legacy-provider (without it ListObjectsV2 continuation tokens fail with 500).
 *
 * s3rver 3.7.1 departs from S3 where the storage contract tests look, so a preloaded shim
 * (conformanceShim below) patches two handlers to behave as S3 documents:
 * - CopyObject decodes x-amz-copy-source with decodeURI, which leaves %2B, %23, %3F, %26, %3D (and the
 *   other reserved characters) encoded, so a correctly encoded source key with '+' or '#' is not found.
 * - PutObject writes in place, so concurrent puts to one key can interleave (serialized per key here).
 * - PutObject ignores If-Match and If-None-Match, DeleteObject ignores If-Match: enforced here per key,
 *   atomically, answering 412 PreconditionFailed as AWS does (tested in test/engines/storage-s3.test.ts).
 * - ListObjectsV2 returns keys in directory-walk order ('a/b' before 'a-b'), does not count common
 *   prefixes against max-keys, repeats them on later pages, and misses a common prefix whose objects
 *   all sit two or more folders deep.
 */
export interface S3rverInstance {
  endpoint: string
  bucket: string
  stop: () => Promise<void>
}

export const s3rverCredentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }

/** The environment that points toolport's s3 driver at an s3rver instance (credentials apart). */
export function s3rverEnv(instance: Pick<S3rverInstance, 'bucket' | 'endpoint'>): Record<string, string> {
  return {
    TOOLPORT_S3_BUCKET: instance.bucket,
    TOOLPORT_S3_ENDPOINT: instance.endpoint,
    TOOLPORT_S3_REGION: 'us-east-1',
    TOOLPORT_S3_FORCE_PATH_STYLE: 'true',
  }
}

/** The S3 driver on an s3rver instance (path-style, its fixed credentials), with any further options. */
export function s3StorageFor(
  instance: Pick<S3rverInstance, 'bucket' | 'endpoint'>,
  extra: Partial<S3StorageOptions> = {},
): ObjectStore {
  return createS3Storage({
    bucket: instance.bucket,
    endpoint: instance.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: s3rverCredentials,
    ...extra,
  })
}

const bucket = 'toolport-test'
const startTimeoutMs = 20_000

function conformanceShim(libDirectory: string): string {
  return `'use strict'
const path = require('node:path')
const lib = ${JSON.stringify(libDirectory)}
const bucketCtrl = require(path.join(lib, 'controllers', 'bucket.js'))
const objectCtrl = require(path.join(lib, 'controllers', 'object.js'))

// The router looks these handlers up on the exports object per request, so replacing them works.
const putObjectCopy = objectCtrl.putObjectCopy
objectCtrl.putObjectCopy = function (ctx) {
  const source = ctx.headers['x-amz-copy-source']
  // encodeURI output survives s3rver's decodeURI unchanged, so it ends up with the fully decoded key.
  if (source) ctx.headers['x-amz-copy-source'] = encodeURI(decodeURIComponent(source))
  return putObjectCopy.call(this, ctx)
}

// s3rver ignores If-Match and If-None-Match on PutObject and If-Match on DeleteObject; AWS answers 412
// PreconditionFailed when the condition does not hold, and 404 NoSuchKey to If-Match on a key with no
// object (MinIO and R2 answer 412 there: the driver takes both as a lost race). Every put and delete of one key runs after the one before it (a chain per
// key), so a condition is checked and the write done as one step: of concurrent writers holding one
// etag exactly one lands.
const S3Error = require(path.join(lib, 'models', 'error.js'))
// Runs of one id (a key, a bucket) one after another: each starts when the one before it settled.
function inTurns() {
  const chains = new Map()
  return (id, run) => {
    const next = (chains.get(id) || Promise.resolve()).catch(() => {}).then(run)
    chains.set(id, next)
    const forget = () => chains.get(id) === next && chains.delete(id)
    next.then(forget, forget)
    return next
  }
}
const oneAtATime = inTurns()
const bare = (etag) => String(etag || '').replace(/^W\\//, '').replace(/^"(.*)"$/, '$1')
async function currentEtag(ctx) {
  try {
    const metadata = await ctx.store.getMetadata(ctx.params.bucket, ctx.params.key)
    return bare(metadata.etag)
  } catch (error) {
    if (error.code === 'ENOENT') return undefined
    throw error
  }
}
function preconditionFailed(condition) {
  return new S3Error('PreconditionFailed', 'At least one of the pre-conditions you specified did not hold', {
    Condition: condition,
  })
}
async function checkConditions(ctx, forDelete) {
  const ifMatch = ctx.headers['if-match']
  const ifNoneMatch = forDelete ? undefined : ctx.headers['if-none-match']
  if (ifMatch === undefined && ifNoneMatch === undefined) return
  const etag = await currentEtag(ctx)
  if (ifNoneMatch !== undefined && ifNoneMatch.trim() === '*' && etag !== undefined) throw preconditionFailed('If-None-Match')
  if (ifMatch !== undefined) {
    // A conditional delete of an object already gone is done (S3 answers 204 then, too).
    if (etag === undefined && forDelete) return
    // AWS: "If there's no current object version with the same name ... the operation fails with a 404".
    if (etag === undefined) throw new S3Error('NoSuchKey', 'The specified key does not exist.', { Key: ctx.params.key })
    const wanted = ifMatch.split(',').map((tag) => bare(tag.trim()))
    if (etag === undefined || !(wanted.includes('*') || wanted.includes(etag))) throw preconditionFailed('If-Match')
  }
}
const putObjectHandler = objectCtrl.putObject
objectCtrl.putObject = function (ctx) {
  return oneAtATime(ctx.params.bucket + '/' + ctx.params.key, async () => {
    await checkConditions(ctx, false)
    return putObjectHandler.call(this, ctx)
  })
}
const deleteObjectHandler = objectCtrl.deleteObject
objectCtrl.deleteObject = function (ctx) {
  return oneAtATime(ctx.params.bucket + '/' + ctx.params.key, async () => {
    await checkConditions(ctx, true)
    return deleteObjectHandler.call(this, ctx)
  })
}

const byUtf8 = (left, right) => Buffer.compare(Buffer.from(left), Buffer.from(right))
// PutObject writes straight into the object's file, so two concurrent puts to one key interleave
// their bytes; DeleteObject removes emptied folders, which a concurrent put may be writing into (its
// file stream then fails unhandled and takes s3rver down). S3 has neither problem: writes of one bucket
// go one after another here, which gives the writers S3's guarantees.
const FilesystemStore = require(path.join(lib, 'stores', 'filesystem.js'))
const serialized = inTurns()
// Its putObject also answers before the bytes are on disk (the write stream is not awaited) and
// truncates the file a reader may be streaming: written here to a temporary file renamed into place,
// and reads buffered under the same turn, so a GET or HEAD sees one whole version with its own etag.
const fsp = require('node:fs/promises')
const crypto = require('node:crypto')
const { Readable } = require('node:stream')
async function collect(content) {
  if (Buffer.isBuffer(content)) return content
  const chunks = []
  for await (const chunk of content) chunks.push(Buffer.from(chunk))
  return Buffer.concat(chunks)
}
let temporaries = 0
FilesystemStore.prototype.putObject = function (object) {
  return serialized(object.bucket, async () => {
    const content = await collect(object.content)
    const objectPath = this.getResourcePath(object.bucket, object.key, 'object')
    await fsp.mkdir(path.dirname(objectPath), { recursive: true })
    const temporary = objectPath + '.' + process.pid + '-' + ++temporaries + '.partial'
    await fsp.writeFile(temporary, content)
    await fsp.rename(temporary, objectPath)
    const md5 = crypto.createHash('md5').update(content).digest('hex')
    await this.putMetadata(object.bucket, object.key, object.metadata, md5)
    return { size: content.length, md5 }
  })
}
const getObject = FilesystemStore.prototype.getObject
FilesystemStore.prototype.getObject = function (bucket, key, options) {
  return serialized(bucket, async () => {
    const object = await getObject.call(this, bucket, key, options)
    // A stream again (HEAD destroys it), of bytes read while no write could interleave.
    if (object && object.content) object.content = Readable.from([await collect(object.content)])
    return object
  })
}
const copyObject = FilesystemStore.prototype.copyObject
FilesystemStore.prototype.copyObject = function (...args) {
  return serialized(args[2], () => copyObject.apply(this, args))
}
const deleteObject = FilesystemStore.prototype.deleteObject
FilesystemStore.prototype.deleteObject = function (bucket, key) {
  return serialized(bucket, () => deleteObject.call(this, bucket, key))
}

const getBucket = bucketCtrl.getBucket
bucketCtrl.getBucket = async function (ctx) {
  if (ctx.query['list-type'] !== '2') return getBucket.call(this, ctx)
  const prefix = ctx.query['prefix'] || ''
  const delimiter = ctx.query['delimiter'] || ''
  const maxKeys = Math.min(1000, Number(ctx.query['max-keys'] || 1000))
  const token = ctx.query['continuation-token']
  const after = token ? Buffer.from(token, 'base64url').toString('utf8') : ctx.query['start-after'] || ''
  const { objects } = await ctx.store.listObjects(ctx.params.bucket, { prefix })
  const entries = new Map()
  for (const object of objects) {
    const cut = delimiter ? object.key.indexOf(delimiter, prefix.length) : -1
    const entry = cut === -1 ? object.key : object.key.slice(0, cut + delimiter.length)
    if (byUtf8(entry, after) > 0 && !entries.has(entry)) entries.set(entry, cut === -1 ? object : null)
  }
  const page = [...entries.keys()].sort(byUtf8).slice(0, maxKeys)
  const truncated = entries.size > page.length
  const contents = page.filter((entry) => entries.get(entry)).map((entry) => entries.get(entry))
  ctx.body = {
    ListBucketResult: {
      '@': { xmlns: 'http://doc.s3.amazonaws.com/2006-03-01/' },
      Name: ctx.params.bucket,
      Prefix: prefix,
      StartAfter: token ? undefined : ctx.query['start-after'],
      ContinuationToken: token || undefined,
      NextContinuationToken: truncated ? Buffer.from(page[page.length - 1]).toString('base64url') : undefined,
      KeyCount: page.length,
      MaxKeys: maxKeys,
      Delimiter: delimiter || undefined,
      IsTruncated: truncated,
      Contents: contents.map((object) => ({
        Key: object.key,
        LastModified: object.lastModifiedDate.toISOString(),
        ETag: object.metadata['etag'],
        Size: object.size,
        StorageClass: 'STANDARD',
      })),
      CommonPrefixes: page.filter((entry) => entries.get(entry) === null).map((entry) => ({ Prefix: entry })),
    },
  }
}
`
}

export interface S3rverOptions {
  /** A fixed port, to restart a stopped server where clients expect it. */
  port?: number
  /** A data folder that outlives stop(), so a restarted server has the same objects. */
  directory?: string
}

export async function startS3rver(options: S3rverOptions = {}): Promise<S3rverInstance> {
  const workDir = await mkdtemp(join(tmpdir(), 'toolport-s3rver-'))
  const dataDir = options.directory ?? join(workDir, 'data')
  await mkdir(dataDir, { recursive: true })
  const packageDir = dirname(createRequire(import.meta.url).resolve('s3rver/package.json'))
  const shim = join(workDir, 'conformance-shim.cjs')
  await writeFile(shim, conformanceShim(join(packageDir, 'lib')))
  const child = spawn(
    process.execPath,
    [
      '--openssl-legacy-provider',
      '--require',
      shim,
      join(packageDir, 'bin', 's3rver.js'),
      '--directory',
      dataDir,
      '--address',
      '127.0.0.1',
      '--port',
      String(options.port ?? 0),
      '--silent',
      '--configure-bucket',
      bucket,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  const stop = async () => {
    await stopChild(child)
    await rm(workDir, { recursive: true, force: true })
  }
  try {
    const endpoint = await waitForEndpoint(child)
    await waitUntilAnswering(endpoint)
    return { endpoint, bucket, stop }
  } catch (error) {
    await stop()
    throw error
  }
}

/** Port 0 lets the OS pick a free port; s3rver prints the one it got ("S3rver listening on host:port"). */
function waitForEndpoint(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = ''
    const timer = setTimeout(
      () => finish(new Error(`s3rver did not start within ${startTimeoutMs} ms: ${output}`)),
      startTimeoutMs,
    )
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /listening on ([\d.]+):(\d+)/.exec(output)
      if (match) finish(undefined, `http://${match[1]}:${match[2]}`)
    }
    const onExit = (code: number | null) => finish(new Error(`s3rver exited early with code ${code}: ${output}`))
    function finish(error?: Error, endpoint?: string) {
      clearTimeout(timer)
      child.stdout?.off('data', onData)
      child.stderr?.off('data', onData)
      child.off('exit', onExit)
      // Keep draining the pipes: a child blocked on a full pipe would stall.
      child.stdout?.resume()
      child.stderr?.resume()
      if (endpoint) resolve(endpoint)
      else reject(error)
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onData)
    child.once('exit', onExit)
  })
}

async function waitUntilAnswering(endpoint: string): Promise<void> {
  const deadline = Date.now() + startTimeoutMs
  for (;;) {
    try {
      // Any HTTP answer will do (anonymous requests get an S3 error document).
      await fetch(`${endpoint}/${bucket}`, { signal: AbortSignal.timeout(1_000) })
      return
    } catch (error) {
      if (Date.now() > deadline) throw error
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
  await exited
  clearTimeout(timer)
}
