import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { fileOutput, readInputFile, saveOutputFile } from '../../src/downloads/handoff'
import { FileInputFields, FileOutputFields, OutputPath } from '../../src/downloads/schemas'
import { createLinkSigner, toBase64Url } from '../../src/downloads/signing'
import type { ObjectStore } from '../../src/storage/store'
import { defineTool } from '../../src/tools/tool'
import { type LocalWeb, startLocalWeb } from '../support/local-web'
import { type S3rverInstance, s3StorageFor, startS3rver } from '../support/s3rver'
import { startTestServer, type TestServer } from '../support/server'

// Test-only tools: the hand-off is shared plumbing, tested here apart from any document format.
const makeNote = defineTool({
  name: 'make_note',
  title: 'Make note',
  description: 'Test tool: stores text as a file and hands it back.',
  effect: 'write',
  uses: ['http', 'links'],
  input: z.object({ text: z.string(), output_path: OutputPath, title: z.string().default('note') }),
  output: z.object(FileOutputFields),
  async run(input, context) {
    const bytes = new TextEncoder().encode(input.text)
    const file = await saveOutputFile(context, {
      outputPath: input.output_path,
      suggestedName: input.title,
      extension: 'txt',
      bytes,
    })
    return fileOutput([file])
  },
})

const measureFile = defineTool({
  name: 'measure_file',
  title: 'Measure file',
  description: 'Test tool: reads a workspace file or an attachment and reports its size.',
  effect: 'read',
  uses: ['http', 'links'],
  input: z.object(FileInputFields),
  output: z.object({ name: z.string(), size: z.number() }),
  async run(input, context) {
    const file = await readInputFile(input, context)
    return { name: file.name, size: file.bytes.byteLength }
  },
})

const secret = 'k'.repeat(40)
const keys = 'alpha=alpha-key-0123456789,beta=beta-key-0123456789'

describe.each(['fs', 's3'] as const)('file hand-off on %s storage', (driver) => {
  let server: TestServer
  let s3rver: S3rverInstance | undefined
  // Attachments are downloaded from a real local server through the real SSRF-checked client.
  let web: LocalWeb
  const alpha = { key: 'alpha-key-0123456789' }

  beforeAll(async () => {
    web = await startLocalWeb({
      '/in.csv': (request, response) => response.end(`downloaded ${request.url}`),
    })
    let storage: ObjectStore | undefined
    if (driver === 's3') {
      s3rver = await startS3rver()
      storage = s3StorageFor(s3rver)
    }
    server = await startTestServer(
      { TOOLPORT_SIGNING_SECRET: secret, TOOLPORT_API_KEYS: keys, TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${web.port}` },
      { tools: [makeNote, measureFile], ...(storage ? { storage } : {}) },
    )
  })
  afterAll(async () => {
    await server.stop()
    await s3rver?.stop()
    await web.stop()
  })

  it('stores the file, describes it, and serves it through its url without a key', async () => {
    const text = 'hello — ü 日本 🎉\n'
    const result = await server.call('make_note', { text, output_path: './notes//Über Plan.txt' }, alpha)
    expect(result.status, JSON.stringify(result.body)).toBe(200)
    const [file] = result.body.files
    expect(file).toMatchObject({
      path: 'notes/Über Plan.txt',
      name: 'Über Plan.txt',
      mime_type: 'text/plain; charset=utf-8',
      size: new TextEncoder().encode(text).byteLength,
      sha256: createHash('sha256').update(text).digest('hex'),
    })
    expect(result.body.openaiFileResponse).toEqual([file.url])
    const expires = Date.parse(file.expires_at) - Date.now()
    expect(expires).toBeGreaterThan(3500_000)
    expect(expires).toBeLessThanOrEqual(3600_000)
    if (driver === 'fs') expect(file.url).toMatch(new RegExp(`^${server.url}/v1/files/`))
    else expect(file.url).toMatch(/X-Amz-Signature=/)

    const download = await fetch(file.url)
    expect(download.status).toBe(200)
    expect(download.headers.get('content-type')).toBe('text/plain; charset=utf-8')
    expect(download.headers.get('content-length')).toBe(String(file.size))
    expect(download.headers.get('content-disposition')).toBe(
      `attachment; filename="_ber Plan.txt"; filename*=UTF-8''%C3%9Cber%20Plan.txt`,
    )
    expect(await download.text()).toBe(text)
    // The file is an ordinary workspace file too.
    expect((await server.call('measure_file', { path: 'notes/Über Plan.txt' }, alpha)).body).toEqual({
      name: 'Über Plan.txt',
      size: file.size,
    })
  })

  it('generates a name under outputs/ and fixes or refuses the extension', async () => {
    const generated = await server.call('make_note', { text: 'x', title: 'Quarterly Report: Q3!' }, alpha)
    expect(generated.body.files[0].path).toMatch(/^outputs\/quarterly-report-q3-\d{8}-\d{6}-[0-9a-f]{6}\.txt$/)
    const added = await server.call('make_note', { text: 'x', output_path: 'plain' }, alpha)
    expect(added.body.files[0].path).toBe('plain.txt')
    const wrong = await server.call('make_note', { text: 'x', output_path: 'a.pdf' }, alpha)
    expect(wrong.status).toBe(400)
    expect(wrong.body).toMatchObject({ code: 'validation', field: 'output_path' })
    const climbing = await server.call('make_note', { text: 'x', output_path: '../up.txt' }, alpha)
    expect(climbing.status).toBe(400)
  })

  it('reads attachments through ctx.http and refuses path plus attachment', async () => {
    const ref = { name: 'in.csv', id: 'file-1', mime_type: 'text/csv', download_link: `${web.url}/in.csv` }
    const read = await server.call('measure_file', { openaiFileIdRefs: [ref] }, alpha)
    expect(read.body).toEqual({ name: 'in.csv', size: 'downloaded /in.csv'.length })
    const internal = await server.call(
      'measure_file',
      { openaiFileIdRefs: [{ ...ref, download_link: 'http://169.254.169.254/x' }] },
      alpha,
    )
    expect(internal.status).toBe(403)
    const both = await server.call('measure_file', { path: 'x', openaiFileIdRefs: [ref] }, alpha)
    expect(both.status).toBe(400)
    const none = await server.call('measure_file', {}, alpha)
    expect(none.body).toMatchObject({ status: 400, field: 'path' })
  })

  it.runIf(driver === 'fs')('answers 403 for expired links and 404 for forged, garbled or foreign ones', async () => {
    const made = await server.call('make_note', { text: 'secret', output_path: 'private.txt' }, alpha)
    const url = new URL(made.body.files[0].url)
    const [payload, signature] = (url.pathname.split('/').at(-1) ?? '').split('.') as [string, string]
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString())
    const signer = createLinkSigner(secret)
    const linkFor = async (changes: Record<number, unknown>, sign = true) => {
      const changed = [...claims]
      for (const [index, value] of Object.entries(changes)) changed[Number(index)] = value
      if (sign) {
        const [, tenant, workspace, path, expiresAt] = changed
        return `${server.url}/v1/files/${await signer.sign({ tenant, workspace, path, expiresAt })}`
      }
      return `${server.url}/v1/files/${toBase64Url(new TextEncoder().encode(JSON.stringify(changed)))}.${signature}`
    }
    const problem = async (link: string) => {
      const response = await fetch(link)
      expect(response.headers.get('content-type')).toBe('application/problem+json')
      return { status: response.status, body: await response.json() }
    }
    expect((await problem(await linkFor({ 4: Math.floor(Date.now() / 1000) - 1 }))).status).toBe(403)
    expect((await problem(await linkFor({ 4: claims[4] + 10_000 }, false))).status).toBe(404)
    expect((await problem(await linkFor({ 1: 'beta' }, false))).status).toBe(404)
    expect((await problem(await linkFor({ 3: 'notes/Über Plan.txt' }, false))).status).toBe(404)
    for (const garbage of ['x', 'a.b', '%FF%FE', `${payload}.${signature}x`, 'A'.repeat(5000)]) {
      const answer = await problem(`${server.url}/v1/files/${garbage}`)
      expect(answer.status, garbage.slice(0, 20)).toBe(404)
      expect(answer.body.code).toBe('not_found')
    }
    // Authentic link, but the file is gone: 404, not 500.
    expect((await problem(await linkFor({ 3: 'never-written.txt' }))).status).toBe(404)
    // Beta's workspace is separate: alpha's path does not exist there.
    const other = await linkFor({ 1: 'beta' })
    expect((await problem(other)).status).toBe(404)
    expect((await fetch(url)).status).toBe(200)
  })

  it.runIf(driver === 's3')('signs the download name and lifetime into the presigned URL', async () => {
    const made = await server.call('make_note', { text: 'presigned', output_path: 'p.txt' }, alpha)
    const url = new URL(made.body.files[0].url)
    expect(url.searchParams.get('X-Amz-Expires')).toBe('3600')
    const download = await fetch(url)
    expect(download.headers.get('content-disposition')).toBe('attachment; filename="p.txt"')
    expect(await download.text()).toBe('presigned')
    // s3rver does not check presigned signatures, so tampering is S3's to refuse and not tested here.
  })

  it('answers 503 for attachments when the deployment has no HTTP client', async () => {
    const bare = await startTestServer({}, { tools: [measureFile], services: { http: undefined } })
    try {
      const ref = { name: 'a', id: '1', download_link: 'https://files.example/a' }
      const result = await bare.call('measure_file', { openaiFileIdRefs: [ref] })
      expect(result.status).toBe(503)
      expect(result.body.hint).toMatch(/write_file/)
    } finally {
      await bare.stop()
    }
  })
})
