import type { FormatDefaults } from './theme'

// Per-format defaults live apart from the renderers, so choosing a theme never loads exceljs or pptxgenjs.
export const sheetDefaults: FormatDefaults = { margin: 50.4, bodySize: 11, headerSize: 16, footerSize: 9 }
export const slideDefaults: FormatDefaults = { margin: 28.8, bodySize: 18, headerSize: 28, footerSize: 10 }
