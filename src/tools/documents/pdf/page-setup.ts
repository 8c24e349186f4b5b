import type { PaperFormat } from '../../../browser/types'
import { ToolError } from '../../../core/errors'

// The page geometry pdf_generation and its dry run share: paper sizes and the printable area.

// Page sizes in points, portrait.
export const paper: Record<PaperFormat, [number, number]> = {
  A3: [841.89, 1190.55],
  A4: [595.28, 841.89],
  A5: [419.53, 595.28],
  Letter: [612, 792],
  Legal: [612, 1008],
  Tabloid: [792, 1224],
}
export const millimetre = 72 / 25.4

interface PageSetup {
  page_size: PaperFormat
  orientation: 'portrait' | 'landscape'
  margins: { top: number; right: number; bottom: number; left: number }
}

// Margins that leave less than this (in mm) across or down the page leave no room for a line of text:
// the renderers then set one character per page and hit the page limit instead of saying why.
const minPrintableMm = 30

export function assertPrintableArea(request: PageSetup): void {
  const [short, long] = paper[request.page_size]
  const landscape = request.orientation === 'landscape'
  const widthMm = (landscape ? long : short) / millimetre
  const heightMm = (landscape ? short : long) / millimetre
  const { top, right, bottom, left } = request.margins
  if (widthMm - left - right >= minPrintableMm && heightMm - top - bottom >= minPrintableMm) return
  throw new ToolError('validation', `The margins leave less than ${minPrintableMm} mm of the page to print on.`, {
    hint: `${request.page_size} ${request.orientation} is ${Math.round(widthMm)} × ${Math.round(heightMm)} mm: keep left + right under ${Math.floor(widthMm - minPrintableMm)} and top + bottom under ${Math.floor(heightMm - minPrintableMm)}.`,
    details: { field: 'margins' },
  })
}
