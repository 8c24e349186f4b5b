import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool } from '../src/tools/tool'
import { startTestServer, type TestServer } from './support/server'

// Input nested deeper than a parser recurses ends in a stack overflow; found by a hostile-input audit in
// marked (quotes, lists), linkedom/Readability and structuredClone. Each must be a clear 4xx, never a 500.

/** A tool whose own recursion overflows on deep input, as a real parser does. */
const recursive = defineTool({
  name: 'count_depth',
  title: 'Count depth',
  description: 'Counts how deep an array nests, recursively (test double for a recursive parser).',
  effect: 'read',
  input: z.object({ levels: z.number().int() }),
  output: z.object({ depth: z.number() }),
  run: async ({ levels }) => {
    const descend = (left: number): number => (left === 0 ? 0 : 1 + descend(left - 1))
    return { depth: descend(levels) }
  },
})

describe('deeply nested input', () => {
  let server: TestServer
  let custom: TestServer
  beforeAll(async () => {
    server = await startTestServer()
    custom = await startTestServer({}, { tools: [recursive] })
  })
  afterAll(async () => {
    await server.stop()
    await custom.stop()
  })

  it('turns a stack overflow anywhere in a tool into 413 with a hint, synchronously and as a job', async () => {
    expect((await custom.call('count_depth', { levels: 10 })).body).toEqual({ depth: 10 })
    const overflow = await custom.call('count_depth', { levels: 10_000_000 })
    expect(overflow.status).toBe(413)
    expect(overflow.body).toMatchObject({
      code: 'size_exceeded',
      detail: 'The input nests too deeply to be processed.',
    })
    expect(overflow.body.hint).toMatch(/Flatten/)

    const submitted = await fetch(`${custom.url}/v1/tools/count_depth?async=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ levels: 10_000_000 }),
    })
    expect(submitted.status).toBe(202)
    const statusUrl = submitted.headers.get('location') as string
    let job = await (await fetch(statusUrl)).json()
    for (let attempt = 0; attempt < 100 && !['succeeded', 'failed'].includes(job.status); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      job = await (await fetch(statusUrl)).json()
    }
    expect(job).toMatchObject({ status: 'failed', error: { code: 'size_exceeded', status: 413 } })
  })

  it.each([
    ['quotes 5,000 deep', `${'>'.repeat(5000)} deep`],
    ['a list 1,000 levels deep', Array.from({ length: 1000 }, (_, level) => `${'  '.repeat(level)}- item`).join('\n')],
    ['a 50,000-character emphasis run', `${'*'.repeat(50_000)}a${'*'.repeat(50_000)}`],
  ])('refuses Markdown with %s in pdf_generation and office_document with 400', async (_label, markdown) => {
    const pdf = await server.call('pdf_generation', { content_type: 'markdown', content: markdown })
    expect(pdf.status, JSON.stringify(pdf.body)).toBe(400)
    expect(pdf.body).toMatchObject({ code: 'validation', field: 'content' })
    const word = await server.call('office_document', { document_type: 'word', content: markdown })
    expect(word.status, JSON.stringify(word.body)).toBe(400)
    expect(word.body.code).toBe('validation')
  })

  it('still renders Markdown nested as deep as documents go', async () => {
    const nested = [
      `${'> '.repeat(8)}a quote eight levels deep`,
      '',
      ...Array.from({ length: 20 }, (_, level) => `${'  '.repeat(level)}- level ${level}`),
      '',
      '```',
      `${' '.repeat(400)}code indented far, inside a fence`,
      '```',
      '',
      '*'.repeat(80),
    ].join('\n')
    const pdf = await server.call('pdf_generation', { content_type: 'markdown', content: nested })
    expect(pdf.status, JSON.stringify(pdf.body)).toBe(200)
    const word = await server.call('office_document', { document_type: 'word', content: nested })
    expect(word.status, JSON.stringify(word.body)).toBe(200)
  })
})
