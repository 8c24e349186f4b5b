import { type PDFDocument, type PDFFont, type PDFPage, type RGB, rgb } from 'pdf-lib'

/**
 * A small text-flow engine on pdf-lib: spans are wrapped into lines that fit a width, and lines
 * flow down pages, starting a new page whenever the next line would cross the bottom margin.
 */
export interface Span {
  text: string
  font: PDFFont
  size: number
  color: RGB
}

interface Piece extends Span {
  width: number
}

export interface Line {
  pieces: Piece[]
  width: number
  /** Tallest font size on the line. */
  size: number
}

export type Measure = (text: string, font: PDFFont, size: number) => number

/** Widths cached per document: fontkit shapes text on every call, and words repeat a lot. */
export function createMeasure(): Measure {
  const cache = new Map<string, number>()
  return (text, font, size) => {
    const key = `${font.name}\u0000${text}`
    let unit = cache.get(key)
    if (unit === undefined) {
      unit = font.widthOfTextAtSize(text, 1000)
      if (cache.size < 200_000) cache.set(key, unit)
    }
    return (unit * size) / 1000
  }
}

// Tabs become spaces and other controls disappear: fonts have no glyphs for them.
export function cleanText(text: string): string {
  return text.replace(/\t/g, '    ').replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '')
}

const maxPieceCharacters = 500

/** Breaks spans into lines no wider than `width`; '\n' forces a break, over-long words are cut. */
export function wrapSpans(spans: readonly Span[], width: number, measure: Measure): Line[] {
  const lines: Line[] = []
  let current: Line = { pieces: [], width: 0, size: 0 }
  const push = () => {
    while (current.pieces.length > 0 && current.pieces.at(-1)?.text.trim() === '') {
      current.width -= current.pieces.pop()?.width ?? 0
    }
    lines.push(current)
    current = { pieces: [], width: 0, size: 0 }
  }
  const add = (span: Span, text: string) => {
    const pieceWidth = measure(text, span.font, span.size)
    current.pieces.push({ ...span, text, width: pieceWidth })
    current.width += pieceWidth
    current.size = Math.max(current.size, span.size)
  }
  for (const span of spans) {
    const segments = cleanText(span.text).split('\n')
    segments.forEach((segment, index) => {
      if (index > 0) push()
      for (const token of segment.match(/\s+|\S+/g) ?? []) {
        const tokenWidth = measure(token, span.font, span.size)
        if (current.width + tokenWidth <= width) {
          add(span, token)
          continue
        }
        if (token.trim() === '') continue
        if (current.pieces.length > 0) push()
        if (tokenWidth <= width) {
          add(span, token)
          continue
        }
        // A word wider than the line is cut by adding up its characters' widths, once each: measuring the
        // growing piece again per character was quadratic (a 600,000-character word, or 30,000 combining
        // marks, whose zero width never filled a line). A piece holds at most maxPieceCharacters.
        let part = ''
        let partWidth = 0
        for (const character of token) {
          const characterWidth = measure(character, span.font, span.size)
          if (part !== '' && (partWidth + characterWidth > width || part.length >= maxPieceCharacters)) {
            add(span, part)
            push()
            part = ''
            partWidth = 0
          }
          part += character
          partWidth += characterWidth
        }
        if (part) add(span, part)
      }
    })
  }
  if (current.pieces.length > 0 || lines.length === 0) push()
  return lines
}

export interface PageBox {
  width: number
  height: number
  margin: { top: number; right: number; bottom: number; left: number }
}

export interface Flow {
  readonly pages: PDFPage[]
  readonly page: PDFPage
  /** Baseline cursor: the top of the next line, in PDF points from the bottom. */
  y: number
  readonly left: number
  readonly width: number
  /** Starts a new page unless `height` still fits above the bottom margin. */
  ensure(height: number): void
  newPage(): void
  drawLine(line: Line, x: number, lineHeight: number, decor?: LineDecor): void
}

export interface LineDecor {
  /** A bullet or number drawn on the same baseline, left of the text. */
  prefix?: { line: Line; x: number }
  background?: { color: RGB; x: number; width: number }
  /** A vertical bar left of the text (block quotes). */
  bar?: { color: RGB; x: number }
}

export function createFlow(document: PDFDocument, box: PageBox, maxPages: number, onLimit: () => never): Flow {
  const pages: PDFPage[] = []
  let page: PDFPage
  const flow: Flow = {
    pages,
    get page() {
      return page
    },
    y: 0,
    left: box.margin.left,
    width: box.width - box.margin.left - box.margin.right,
    newPage() {
      if (pages.length >= maxPages) onLimit()
      page = document.addPage([box.width, box.height])
      pages.push(page)
      flow.y = box.height - box.margin.top
    },
    ensure(height) {
      if (flow.y - height < box.margin.bottom && flow.y < box.height - box.margin.top) flow.newPage()
    },
    drawLine(line, x, lineHeight, decor = {}) {
      flow.ensure(lineHeight)
      const bottom = flow.y - lineHeight
      if (decor.background) {
        const { color, x: left, width } = decor.background
        page.drawRectangle({ x: left, y: bottom, width, height: lineHeight, color })
      }
      if (decor.bar)
        page.drawRectangle({ x: decor.bar.x, y: bottom, width: 2.5, height: lineHeight, color: decor.bar.color })
      const size = Math.max(line.size, decor.prefix?.line.size ?? 0)
      const baseline = bottom + (lineHeight - size) / 2 + size * 0.22
      // Neighbouring pieces in one font become one text operation: far fewer glyph lookups and PDF operators.
      const draw = (drawn: Line, start: number) => {
        let cursor = start
        let run: { text: string; x: number; piece: Piece } | undefined
        const flush = () => {
          const text = run?.text.trimEnd()
          if (run && text)
            page.drawText(text, {
              x: run.x,
              y: baseline,
              size: run.piece.size,
              font: run.piece.font,
              color: run.piece.color,
            })
          run = undefined
        }
        for (const piece of drawn.pieces) {
          const same =
            run && run.piece.font === piece.font && run.piece.size === piece.size && run.piece.color === piece.color
          if (!same) {
            flush()
            if (piece.text.trim() !== '') run = { text: piece.text, x: cursor, piece }
          } else if (run) run.text += piece.text
          cursor += piece.width
        }
        flush()
      }
      if (decor.prefix) draw(decor.prefix.line, decor.prefix.x)
      draw(line, x)
      flow.y = bottom
    },
  }
  flow.newPage()
  return flow
}

export const black = rgb(0.1, 0.1, 0.1)

export function hexColor(hex: string): RGB {
  const value = Number.parseInt(hex, 16)
  return rgb(((value >> 16) & 255) / 255, ((value >> 8) & 255) / 255, (value & 255) / 255)
}
