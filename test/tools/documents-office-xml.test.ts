import { strFromU8, unzipSync } from 'fflate'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { xmlRow, xmlText } from '../../src/tools/documents/office/xml-text'
import { makeAndDownload } from '../support/documents'
import { startTestServer, type TestServer } from '../support/server'

/**
 * Characters XML 1.0 cannot hold, in every text field of every document type: the file must still be
 * well-formed XML (Word, Excel and PowerPoint call it corrupt otherwise), and an emoji, a valid
 * surrogate pair, must come through intact. (A lone surrogate cannot reach a tool over HTTP, whose
 * bodies refuse it: xmlText is checked for it directly.)
 */
const bad = '\u0001\u0008\u000b\u001f\uffff\ufffe'
const emoji = '😀'
const dirty = (label: string) => `${label}${bad}${emoji}${bad}end`

// Outside XML 1.0's Char production: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF].
const notXmlChar = /[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/u
// Also the character references for them, which are just as invalid in XML 1.0.
const notXmlReference =
  /&#(?:x0*(?:[0-8bcef]|1[0-9a-f]|d[89a-f][0-9a-f]{2}|fff[ef])|0*(?:[0-8]|1[1-2]|1[4-9]|2\d|3[01]));/i

const markdown = `# ${dirty('Heading')}

${dirty('Paragraph')} **${dirty('bold')}** [${dirty('link')}](https://example.com/${dirty('path')})

- ${dirty('bullet')}
1. ${dirty('numbered')}

| ${dirty('H1')} | H2 |
|---|---|
| ${dirty('cell')} | 2 |

\`\`\`
${dirty('code')}
\`\`\`
`

const table = { headers: [dirty('header'), 'b'], rows: [[dirty('cell'), 1, null, true]] }

const cases = [
  {
    document_type: 'word',
    content: markdown,
  },
  {
    document_type: 'word',
    content: {
      sections: [
        {
          heading: dirty('section'),
          text: markdown,
          bullets: [dirty('bullet')],
          numbered: [dirty('numbered')],
          table,
        },
      ],
    },
  },
  { document_type: 'powerpoint', content: markdown },
  {
    document_type: 'powerpoint',
    content: {
      slides: [
        {
          title: dirty('slide'),
          subtitle: dirty('subtitle'),
          text: markdown,
          bullets: [dirty('bullet')],
          numbered: [dirty('numbered')],
          table,
          notes: dirty('notes'),
        },
      ],
    },
  },
  { document_type: 'excel', content: markdown },
  {
    document_type: 'excel',
    content: {
      sheets: [
        { name: dirty('sheet'), headers: [dirty('header'), 'b'], rows: [[dirty('cell'), 1, null, true], [dirty('x')]] },
      ],
    },
  },
] as const

describe('office_document writes only characters XML 1.0 can hold', () => {
  let server: TestServer

  beforeAll(async () => {
    server = await startTestServer()
  })
  afterAll(async () => {
    await server.stop()
  })

  it.each(
    cases.map(
      (input, index) =>
        [index, input.document_type, typeof input.content === 'string' ? 'markdown' : 'JSON', input] as const,
    ),
  )('case %i: %s from %s content, every text field and the title', async (index, type, _from, input) => {
    const extension = { word: 'docx', powerpoint: 'pptx', excel: 'xlsx' }[type]
    const { bytes } = await makeAndDownload(server, 'office_document', {
      ...input,
      title: dirty('Title'),
      customization: { border_style: 'dotted' },
      output_path: `xml/case${index}.${extension}`,
    })
    const parts = Object.entries(unzipSync(bytes)).filter(([name]) => /\.(xml|rels)$/.test(name))
    expect(parts.length).toBeGreaterThan(3)
    for (const [name, data] of parts) {
      // fatal: bytes that are not UTF-8 (an encoded lone surrogate) throw instead of becoming U+FFFD.
      const xml = new TextDecoder('utf-8', { fatal: true }).decode(data)
      expect(strFromU8(data)).toBe(xml)
      expect(xml.match(notXmlChar)?.[0].codePointAt(0)?.toString(16), name).toBeUndefined()
      expect(xml.match(notXmlReference)?.[0], name).toBeUndefined()
      // A lone surrogate written as UTF-8 comes out as U+FFFD: it must have been removed instead.
      expect(xml.includes('\ufffd'), name).toBe(false)
    }
    const text = parts.map(([, data]) => strFromU8(data)).join('\n')
    // The clean text on either side of the removed characters is kept, emoji included.
    expect(text).toContain(`Title${emoji}end`)
    const fields =
      type === 'excel'
        ? typeof input.content === 'string'
          ? ['Paragraph', 'cell', 'code']
          : ['header', 'cell', 'x']
        : typeof input.content === 'string'
          ? ['Heading', 'Paragraph', 'bold', 'bullet', 'numbered', 'H1', 'cell', 'code']
          : ['bullet', 'numbered', 'header', 'cell', 'Paragraph']
    for (const field of fields) expect(text).toContain(`${field}${emoji}end`)
    if (type === 'powerpoint' && typeof input.content !== 'string') {
      for (const field of ['slide', 'subtitle', 'notes']) expect(text).toContain(`${field}${emoji}end`)
    }
  })
})

describe('xmlText', () => {
  it('drops lone surrogates and every other non-XML character, keeps pairs, and copies nothing clean', () => {
    expect(xmlText(`a\ud800b\udc00c${emoji}\u0000\t\n\r`)).toBe(`abc${emoji}\t\n\r`)
    const clean = ['x', 1, null, true]
    expect(xmlRow(clean)).toBe(clean)
    expect(xmlRow(['a\uffff', 2])).toEqual(['a', 2])
  })
})

describe('an Excel border_style', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer()
  })
  afterAll(async () => {
    await server.stop()
  })

  it.each([1, 2, 5])('dotted at border_width %i is a dotted border, never dash-dot', async (width) => {
    const { bytes } = await makeAndDownload(server, 'office_document', {
      document_type: 'excel',
      content: { sheets: [{ name: 'S', headers: ['a'], rows: [['1']] }] },
      customization: { border_style: 'dotted', border_width: width },
      output_path: `xml/dotted-${width}.xlsx`,
    })
    const styles = strFromU8(unzipSync(bytes)['xl/styles.xml'] as Uint8Array)
    expect(styles).toContain('style="dotted"')
    expect(styles).not.toMatch(/DashDot/)
  })
})
