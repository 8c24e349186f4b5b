import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestServer } from '../support/server'

// Clients written for the reference systems call toolport unchanged once their pack is enabled.

let server: TestServer
let plain: TestServer

beforeAll(async () => {
  server = await startTestServer({ TOOLPORT_COMPAT_PACKS: 'boris,bond,fengyu' }, { shell: true })
  plain = await startTestServer()
}, 60_000)
afterAll(async () => {
  await server?.stop()
  await plain?.stop()
})

describe('compat packs', () => {
  it('boris: two spellings of one field are a 400 naming both, never one dropped, at every level', async () => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      [
        'pdf_generation',
        { content: 'x', outputPath: 'r/one.pdf', output_path: 'r/two.pdf' },
        'outputPath and output_path',
      ],
      [
        'office_document',
        {
          document_type: 'word',
          content: 'x',
          output_path: 'r/three.docx',
          customization: { primaryColor: '1A73E8', primary_color: '000000' },
        },
        'primaryColor and primary_color',
      ],
      [
        'execute_command',
        { command: 'pwd', working_directory: 'sub', workingDirectory: '.' },
        'working_directory and workingDirectory',
      ],
    ]
    for (const [tool, input, named] of cases) {
      const answer = await server.call(tool, input)
      expect(answer.status, JSON.stringify(answer.body)).toBe(400)
      expect(answer.body.detail).toContain(`${named} are two spellings of`)
    }
    const listed = await server.call('list_files', { path: 'r' })
    const names = (listed.body.entries ?? []).map((entry: { name: string }) => entry.name)
    expect(names).not.toContain('one.pdf')
    expect(names).not.toContain('two.pdf')
    expect(names).not.toContain('three.docx')
  })

  it('boris: camelCase fields on toolport tools, at every level, without changing the published schema', async () => {
    const pdf = await server.call('pdf_generation', {
      content: '# Report\n\nText.',
      contentType: 'markdown',
      outputPath: 'r/x.pdf',
    })
    expect(pdf.status, JSON.stringify(pdf.body)).toBe(200)
    expect(pdf.body.files[0].path).toBe('r/x.pdf')
    const word = await server.call('office_document', {
      documentType: 'word',
      outputPath: 'r/doc.docx',
      title: 'Report',
      content: 'Content here',
      customization: { primaryColor: '1A73E8', layout: 'twoColumn', style: 'corporate' },
    })
    expect(word.status, JSON.stringify(word.body)).toBe(200)
    expect(word.body.files[0].path).toBe('r/doc.docx')
    await server.call('write_file', { path: 'sub/hello.txt', content: 'hi' })
    const shell = await server.call('execute_command', { command: 'cat hello.txt', workingDirectory: 'sub' })
    expect(shell.body).toMatchObject({ exit_code: 0, stdout: 'hi' })
    const catalog = await (await fetch(`${server.url}/v1/tools`)).json()
    const pdfEntry = catalog.tools.find((tool: { name: string }) => tool.name === 'pdf_generation')
    expect(pdfEntry.id).toBe('builtin:pdf_generation')
    expect(Object.keys(pdfEntry.input_schema.properties)).toContain('output_path')
    expect(Object.keys(pdfEntry.input_schema.properties)).not.toContain('outputPath')
  })

  it('bond: shell, file_read, file_write and env run their toolport tools', async () => {
    const written = await server.call('file_write', { path: 'bond.txt', content: 'one\ntwo\n' })
    expect(written.status).toBe(200)
    expect((await server.call('file_read', { path: 'bond.txt', start_line: 2, end_line: 2 })).body.content).toBe(
      'two\n',
    )
    expect((await server.call('shell', { command: 'wc -l < bond.txt' })).body.stdout.trim()).toBe('2')
    expect((await server.call('env', { name: 'NOT_ALLOWED' })).status).toBe(403)
    const catalog = await (await fetch(`${server.url}/v1/tools`)).json()
    expect(catalog.tools.find((tool: { name: string }) => tool.name === 'shell')).toMatchObject({
      id: 'compat-bond:shell',
      effect: 'destructive',
    })
  })

  it('fengyu: filePath for excel_analyze', async () => {
    await server.call('write_file', { path: 'data.csv', content: 'a,b\n1,2\n' })
    const analyzed = await server.call('excel_analyze', { filePath: 'data.csv' })
    expect(analyzed.status, JSON.stringify(analyzed.body)).toBe(200)
    expect(analyzed.body.file).toMatchObject({ name: 'data.csv', format: 'csv' })
  })

  it('are off by default: the reference spellings are not toolport tools there', async () => {
    expect((await plain.call('shell', { command: 'true' })).status).toBe(404)
    const catalog = await (await fetch(`${plain.url}/v1/tools`)).json()
    expect(catalog.tools.some((tool: { name: string }) => tool.name === 'file_read')).toBe(false)
  })
})
