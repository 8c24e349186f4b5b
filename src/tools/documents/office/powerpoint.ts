import PptxGenJS from 'pptxgenjs'
import type { DocSection } from './content'
import { dotTableBorders } from './slide-borders'
import {
  addTable,
  addText,
  band,
  bodyFrame,
  inch,
  paragraphs,
  type Slide,
  slideHeight,
  slideWidth,
  titleBand,
} from './slide-parts'
import type { Theme } from './theme'
import { xmlSafe, xmlText } from './xml-text'

/** PowerPoint (.pptx) with pptxgenjs, 16:9. Measures are inches; the theme's points are divided by 72. */

const linesPerSlide = 12
const tableRowsPerSlide = 12
// A table longer than this belongs in a spreadsheet; the rest is summarized in a note.
const maxTableSlides = 20

function newSlide(pptx: PptxGenJS, theme: Theme, title: string, documentTitle: string): Slide {
  const slide = pptx.addSlide()
  slide.background = { color: theme.background }
  const { bandHeight, textY, textHeight } = titleBand(theme)
  band(slide, theme, 0, bandHeight)
  slide.addText(title, {
    x: inch(theme.margin.left),
    y: textY,
    w: slideWidth - inch(theme.margin.left + theme.margin.right),
    h: textHeight,
    fontFace: theme.font,
    fontSize: theme.headerSize,
    bold: theme.boldTitle,
    color: theme.onPrimary,
    valign: 'middle',
  })
  const footerY = slideHeight - inch(theme.margin.bottom) - inch(theme.footerSize * 1.6)
  slide.addText(documentTitle, {
    x: inch(theme.margin.left),
    y: footerY,
    w: 6,
    h: inch(theme.footerSize * 1.6),
    fontFace: theme.font,
    fontSize: theme.footerSize,
    color: theme.secondary,
  })
  slide.slideNumber = {
    x: slideWidth - inch(theme.margin.right) - 1,
    y: footerY,
    w: 1,
    h: inch(theme.footerSize * 1.6),
    fontFace: theme.font,
    fontSize: theme.footerSize,
    color: theme.secondary,
    align: 'right',
  }
  return slide
}

function titleSlide(pptx: PptxGenJS, theme: Theme, title: string, subtitle: string): void {
  const slide = pptx.addSlide()
  slide.background = { color: theme.background }
  // The margins frame the title slide too: its text stays inside margin_left/right, below margin_top.
  const x = inch(theme.margin.left)
  const w = slideWidth - x - inch(theme.margin.right)
  const y = theme.headerStyle === 'banner' ? 0 : Math.max(1.6, inch(theme.margin.top))
  const h = theme.headerStyle === 'banner' ? Math.max(3, inch(theme.margin.top) + 2) : 1.8
  band(slide, theme, y, h)
  slide.addText(title, {
    x,
    y: theme.headerStyle === 'banner' ? inch(theme.margin.top) : y,
    w,
    h: theme.headerStyle === 'banner' ? h - inch(theme.margin.top) : h,
    align: 'center',
    valign: 'middle',
    fontFace: theme.font,
    fontSize: theme.headerSize * 1.5,
    bold: theme.boldTitle,
    color: theme.onPrimary,
  })
  slide.addText(subtitle, {
    x,
    y: y + h + inch(theme.padding.content) + 0.2,
    w,
    h: 0.6,
    align: 'center',
    fontFace: theme.font,
    fontSize: theme.bodySize,
    color: theme.secondary,
    italic: theme.italicBody,
  })
}

export async function renderPowerPoint(rawTitle: string, rawSections: DocSection[], theme: Theme): Promise<Uint8Array> {
  // All user text enters here: nothing XML 1.0 cannot hold may reach pptxgenjs.
  const title = xmlText(rawTitle)
  const sections = xmlSafe(rawSections)
  const pptx = new PptxGenJS()
  pptx.layout = 'LAYOUT_16x9'
  pptx.title = title
  pptx.author = 'toolport'
  pptx.theme = { headFontFace: theme.font, bodyFontFace: theme.font }
  titleSlide(pptx, theme, title, sections[0]?.subtitle ?? new Date().toISOString().slice(0, 10))
  const frame = bodyFrame(theme)
  for (const section of sections) {
    const name = section.title ?? title
    const tables = section.blocks.filter((block) => block.type === 'table')
    const lines = paragraphs(
      section.blocks.filter((block) => block.type !== 'table'),
      theme,
    )
    for (
      let start = 0;
      start < Math.max(lines.length, tables.length > 0 ? 0 : 1);
      start += linesPerSlide * theme.columns
    ) {
      const slide = newSlide(pptx, theme, start === 0 ? name : `${name} (cont.)`, title)
      const chunk = lines.slice(start, start + linesPerSlide * theme.columns)
      // Tables get slides of their own, so text always has the whole body frame.
      addText(slide, chunk, frame, theme)
      if (section.notes) slide.addNotes(section.notes)
    }
    for (const table of tables) {
      const pages = Math.min(maxTableSlides, Math.max(1, Math.ceil(table.rows.length / tableRowsPerSlide)))
      for (let page = 0; page < pages; page++) {
        const slide = newSlide(
          pptx,
          theme,
          page === 0 && lines.length === 0 ? name : `${name} (table${pages > 1 ? ` ${page + 1}/${pages}` : ''})`,
          title,
        )
        addTable(slide, table, table.rows.slice(page * tableRowsPerSlide, (page + 1) * tableRowsPerSlide), frame, theme)
      }
      const cut = table.rows.length - pages * tableRowsPerSlide
      if (cut > 0)
        addText(
          newSlide(pptx, theme, `${name} (more)`, title),
          [[{ text: `${cut} more rows not shown; make an Excel document for the full table.` }]],
          frame,
          theme,
        )
    }
  }
  const output = new Uint8Array((await pptx.write({ outputType: 'nodebuffer' })) as ArrayBuffer)
  return theme.border.style === 'dotted' ? dotTableBorders(output) : output
}
