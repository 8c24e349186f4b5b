import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import fontkit from '@pdf-lib/fontkit'
import type { PDFDocument, PDFFont } from 'pdf-lib'

/**
 * pdf-lib's standard fonts are WinAnsi only ("WinAnsi cannot encode ✓"), so PDFs embed DejaVu (the
 * dejavu-fonts-ttf package: Latin, Greek, Cyrillic, many symbols). Subsetting keeps each PDF small.
 * Scripts DejaVu lacks (CJK) show as empty boxes rather than failing.
 */
export type FontStyle = 'regular' | 'bold' | 'italic' | 'boldItalic' | 'mono' | 'monoBold'

const files: Record<FontStyle, string> = {
  regular: 'DejaVuSans.ttf',
  bold: 'DejaVuSans-Bold.ttf',
  italic: 'DejaVuSans-Oblique.ttf',
  boldItalic: 'DejaVuSans-BoldOblique.ttf',
  mono: 'DejaVuSansMono.ttf',
  monoBold: 'DejaVuSansMono-Bold.ttf',
}

export type FontSet = (style: FontStyle) => Promise<PDFFont>

export function fontPath(style: FontStyle): string {
  return createRequire(import.meta.url).resolve(`dejavu-fonts-ttf/ttf/${files[style]}`)
}

/** Embeds each style on first use only, once per document. */
export function documentFonts(document: PDFDocument): FontSet {
  document.registerFontkit(fontkit)
  const embedded = new Map<FontStyle, Promise<PDFFont>>()
  return (style) => {
    let font = embedded.get(style)
    if (!font) {
      font = readFile(fontPath(style)).then((bytes) => document.embedFont(bytes, { subset: true }))
      embedded.set(style, font)
    }
    return font
  }
}
