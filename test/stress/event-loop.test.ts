import { strToU8, zipSync } from 'fflate'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { maxBlockMs, measureLiveness } from '../support/liveness'
import { type LocalWeb, startLocalWeb } from '../support/local-web'
import { startTestServer, type TestServer } from '../support/server'

/**
 * No call may hold the others up: each heavy input below (every one within today's limits, each of which
 * once kept the event loop busy for seconds to minutes) runs beside a stream of /healthz calls, and the
 * test server runs in this process, so its event loop is the one measured. A liveness bound, not a speed
 * target: the loop may never be blocked for a second, however long the heavy call itself takes.
 */

const gated = 'acme-gated-key-0123456789'
const direct = 'acme-direct-key-0123456789'

let server: TestServer
let web: LocalWeb

const wide = `<html><body>${'<div><p>hello world paragraph text</p></div>'.repeat(100_000)}</body></html>`
const table = `<html><body><table>${`<tr>${'<td>cell</td>'.repeat(20)}</tr>`.repeat(20_000)}</table></body></html>`

function workbook(sheet: string): Uint8Array {
  return zipSync({
    '[Content_Types].xml': strToU8('<Types/>'),
    'xl/workbook.xml': strToU8('<workbook><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>'),
    'xl/_rels/workbook.xml.rels': strToU8(
      '<Relationships><Relationship Id="rId1" Target="worksheets/sheet1.xml"/></Relationships>',
    ),
    'xl/worksheets/sheet1.xml': strToU8(sheet),
  })
}

const lines = (word: string, count: number) =>
  Array.from({ length: count }, (_, index) => `${word} ${index}`).join('\n')

beforeAll(async () => {
  web = await startLocalWeb({
    '/wide': (_request, response) => response.end(wide),
    '/table': (_request, response) => response.end(table),
  })
  server = await startTestServer(
    { TOOLPORT_FETCH_ALLOW_HOSTS: `127.0.0.1:${web.port}` },
    {
      fileKeys: [
        { tenant: 'default', key: direct },
        { tenant: 'default', key: gated, require_approval: ['write'] },
      ],
    },
  )
  const workspace = 'tenants/default/workspaces/default/'
  await server.storage.put(`${workspace}big.txt`, 'a'.repeat(8 * 1024 * 1024))
  await server.storage.put(`${workspace}wide.txt`, lines('old', 10_000))
  for (let index = 0; index < 300; index++) await server.storage.put(`${workspace}${'a'.repeat(200)}${index}.txt`, 'x')
  await server.storage.put(
    `${workspace}whitespace.xlsx`,
    workbook(
      `<worksheet><sheetData>${' '.repeat(150_000_000)}<row r="1"><c r="A1"><v>1</v></c></row></sheetData></worksheet>`,
    ),
  )
  await server.storage.put(`${workspace}spaces.csv`, ' '.repeat(9_000_000))
}, 120_000)

afterAll(async () => {
  await server?.stop()
  await web?.stop()
})

const call = (tool: string, body: unknown, query = '', key = direct) =>
  fetch(`${server.url}/v1/tools/${tool}${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  }).then(async (response) => {
    await response.arrayBuffer()
    return { status: response.status }
  })

const longOldText = `${'a'.repeat(15_000)}c${'a'.repeat(15_000)}`

const heavyInputs: Array<[string, () => Promise<{ status: number }>, number]> = [
  [
    'list_files with a glob of 40 wildcards over long names',
    () => call('list_files', { glob: `${'*a'.repeat(40)}*b`, recursive: true }),
    200,
  ],
  [
    'pdf_generation of a 600,000-character word',
    () => call('pdf_generation', { content: 'x'.repeat(600_000), content_type: 'text' }),
    200,
  ],
  [
    'pdf_generation of 30,000 combining marks',
    () => call('pdf_generation', { content: `a${'\u0301'.repeat(30_000)}`, content_type: 'text' }),
    200,
  ],
  [
    'apply_edit of a long old_text in an 8 MB file',
    () => call('apply_edit', { path: 'big.txt', old_text: longOldText, new_text: 'x' }),
    404,
  ],
  [
    'write_file replace of a long old_text in an 8 MB file',
    () => call('write_file', { path: 'big.txt', mode: 'replace', old_text: longOldText, new_text: 'x' }),
    404,
  ],
  [
    'multi_edit of 20 long old_texts in an 8 MB file',
    () =>
      call('multi_edit', {
        path: 'big.txt',
        edits: Array.from({ length: 20 }, () => ({ old_text: 'a'.repeat(30_000), new_text: 'a'.repeat(30_000) })),
      }),
    200,
  ],
  [
    'a dry run of 10,000 changed lines',
    () => call('write_file', { path: 'wide.txt', content: lines('new', 10_000) }, '?dry_run=true'),
    200,
  ],
  [
    'an approval card of 10,000 changed lines',
    () => call('write_file', { path: 'wide.txt', content: lines('new', 10_000) }, '', gated),
    202,
  ],
  ['web_fetch of a page of 200,000 elements', () => call('web_fetch', { url: `${web.url}/wide` }), 200],
  ['web_fetch of a table of 400,000 cells', () => call('web_fetch', { url: `${web.url}/table` }), 200],
  ['excel_analyze of 150 MB of whitespace', () => call('excel_analyze', { path: 'whitespace.xlsx' }), 200],
  ['excel_analyze of a 9 MB CSV of spaces', () => call('excel_analyze', { path: 'spaces.csv' }), 200],
]

describe('the event loop under heavy calls', () => {
  it.each(heavyInputs)('stays responsive during %s', { timeout: 120_000 }, async (_name, heavy, expected) => {
    const { status, loopMs, healthMs } = await measureLiveness(server, heavy)
    expect(status).toBe(expected)
    expect(loopMs, 'longest event-loop delay (ms)').toBeLessThan(maxBlockMs)
    expect(healthMs, 'slowest /healthz round trip (ms)').toBeLessThan(maxBlockMs)
  })
})
