import {
  AlignmentType,
  Document,
  Footer,
  Header,
  LevelFormat,
  Packer,
  PageNumber,
  Paragraph,
  SectionType,
  TextRun,
} from 'docx'
import type { Block } from '../markdown'
import type { Theme } from './theme'
import { blockToWord, halfPoints, titleBlock, twips } from './word-blocks'
import { xmlSafe, xmlText } from './xml-text'

/** Word (.docx) with docx: every customization lands in styles, section properties or the blocks. */
export async function renderWord(rawTitle: string, rawBlocks: Block[], theme: Theme): Promise<Uint8Array> {
  // All user text enters here: nothing XML 1.0 cannot hold may reach docx.
  const title = xmlText(rawTitle)
  const blocks = xmlSafe(rawBlocks)
  const listIndex = { next: 1 }
  const body = blocks.flatMap((block) => blockToWord(block, theme, listIndex))
  const page = {
    margin: {
      top: twips(theme.margin.top),
      bottom: twips(theme.margin.bottom),
      left: twips(theme.margin.left),
      right: twips(theme.margin.right),
      header: twips(theme.padding.header),
      footer: twips(theme.padding.footer),
    },
  }
  const footerRun = { size: halfPoints(theme.footerSize), color: theme.secondary }
  const header = new Header({
    children: [
      new Paragraph({ alignment: AlignmentType.RIGHT, children: [new TextRun({ text: title, ...footerRun })] }),
    ],
  })
  const footer = new Footer({
    children: [
      new Paragraph({
        alignment: AlignmentType.CENTER,
        children: [
          new TextRun({ ...footerRun, children: ['Page ', PageNumber.CURRENT, ' of ', PageNumber.TOTAL_PAGES] }),
        ],
      }),
    ],
  })
  const document = new Document({
    title,
    creator: 'toolport',
    background: { color: theme.background },
    styles: {
      default: {
        document: {
          run: { font: theme.font, size: halfPoints(theme.bodySize), color: theme.text, italics: theme.italicBody },
          paragraph: { spacing: { line: Math.round(240 * theme.lineSpacing), after: twips(theme.padding.content) } },
        },
      },
    },
    numbering: {
      config: [
        {
          reference: 'ordered',
          levels: Array.from({ length: 9 }, (_, level) => ({
            level,
            format:
              level % 3 === 0
                ? LevelFormat.DECIMAL
                : level % 3 === 1
                  ? LevelFormat.LOWER_LETTER
                  : LevelFormat.LOWER_ROMAN,
            text: `%${level + 1}.`,
            alignment: AlignmentType.START,
            style: { paragraph: { indent: { left: 720 * (level + 1), hanging: 360 } } },
          })),
        },
      ],
    },
    sections: [
      {
        properties: { page },
        headers: { default: header },
        footers: { default: footer },
        children: titleBlock(title, theme),
      },
      {
        // The title spans the page; the body flows in the chosen columns (grid: two with a rule between).
        properties: {
          type: SectionType.CONTINUOUS,
          page,
          ...(theme.columns > 1
            ? { column: { count: theme.columns, space: 708, separate: theme.layout === 'grid' } }
            : {}),
        },
        headers: { default: header },
        footers: { default: footer },
        children: body.length > 0 ? body : [new Paragraph({})],
      },
    ],
  })
  return new Uint8Array(await Packer.toBuffer(document))
}
