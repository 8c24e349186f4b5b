import { execFileSync } from 'node:child_process'
import { strFromU8, unzipSync } from 'fflate'
import { expect } from 'vitest'
import type { ObjectStore } from '../../src/storage/store'
import { type S3rverInstance, s3StorageFor, startS3rver } from './s3rver'
import type { TestServer } from './server'

/** Helpers shared by the document suites: storage per driver, downloads through the returned url, unzip. */
export async function storageFor(driver: 'fs' | 's3'): Promise<{ storage?: ObjectStore; s3rver?: S3rverInstance }> {
  if (driver === 'fs') return {}
  const s3rver = await startS3rver()
  const storage = s3StorageFor(s3rver)
  return { storage, s3rver }
}

export interface Downloaded {
  // biome-ignore lint/suspicious/noExplicitAny: tool output JSON
  file: any
  bytes: Uint8Array
  response: Response
}

/** Calls a file-making tool, checks the hand-off record, and downloads the file through its url. */
export async function makeAndDownload(server: TestServer, tool: string, input: unknown): Promise<Downloaded> {
  const result = await server.call(tool, input)
  expect(result.status, JSON.stringify(result.body).slice(0, 2000)).toBe(200)
  expect(JSON.stringify(result.body).length).toBeLessThan(100_000)
  const [file] = result.body.files
  expect(result.body.openaiFileResponse).toEqual([file.url])
  const response = await fetch(file.url)
  expect(response.status).toBe(200)
  const bytes = new Uint8Array(await response.arrayBuffer())
  expect(bytes.byteLength).toBe(file.size)
  expect(response.headers.get('content-type')).toBe(file.mime_type)
  expect(response.headers.get('content-disposition')).toContain('attachment')
  const digest = Buffer.from(await crypto.subtle.digest('SHA-256', bytes)).toString('hex')
  expect(digest).toBe(file.sha256)
  return { file, bytes, response }
}

/** The text parts of an OOXML package, by part name. */
export function ooxmlParts(bytes: Uint8Array): Record<string, string> {
  const entries = unzipSync(bytes, { filter: (entry) => /\.(xml|rels)$/.test(entry.name) })
  return Object.fromEntries(Object.entries(entries).map(([name, data]) => [name, strFromU8(data)]))
}

/** Text of a PDF through poppler's pdftotext, or undefined where poppler-utils is not installed. */
export function pdfText(bytes: Uint8Array): string | undefined {
  try {
    return execFileSync('pdftotext', ['-layout', '-', '-'], { input: bytes, maxBuffer: 64 * 1024 * 1024 }).toString()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}

export const hasPoppler = (() => {
  try {
    execFileSync('pdftotext', ['-v'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
})()
