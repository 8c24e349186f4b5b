import { PassThrough } from 'node:stream'
import ExcelJS from 'exceljs'
import type { Cell, SheetData } from './content'
import { mixColors, type Theme } from './theme'
import { xmlRow, xmlText } from './xml-text'

/**
 * Excel (.xlsx) with exceljs's streaming WorkbookWriter: rows are committed as they are written, so a
 * 100,000-row sheet never sits in memory as a workbook model. Layout has no meaning in a grid and is
 * ignored here; every other customization lands in fills, fonts, borders, row heights or page setup.
 */

type Style = Partial<ExcelJS.Style>
const argb = (hex: string) => ({ argb: `FF${hex}` })

function edge(theme: Theme): Partial<ExcelJS.Border> | undefined {
  const { style, width } = theme.border
  if (style === 'none') return undefined
  const excelStyle: ExcelJS.BorderStyle =
    style === 'dashed'
      ? width > 1
        ? 'mediumDashed'
        : 'dashed'
      : // Excel has one dotted border whatever the width (its only heavier ones are dash-dot, not dotted).
        style === 'dotted'
        ? 'dotted'
        : width >= 3
          ? 'thick'
          : width === 2
            ? 'medium'
            : 'thin'
  return { style: excelStyle, color: argb(theme.table.borderColor) }
}

function borders(theme: Theme, shadow = false): Partial<ExcelJS.Borders> {
  const side = edge(theme)
  // No shadows in a grid: a darker, heavier bottom and right edge gives the same lifted look.
  const dark = { style: 'medium' as const, color: argb(mixColors(theme.text, '000000', 0.4)) }
  return {
    ...(side ? { top: side, left: side, bottom: side, right: side } : {}),
    ...(shadow && theme.shadow ? { bottom: dark, right: dark } : {}),
  }
}

function styles(theme: Theme) {
  const rowHeight = theme.bodySize * 1.3 * theme.lineSpacing + theme.padding.content / 2
  const body = (fill: string): Style => ({
    font: { name: theme.font, size: theme.bodySize, color: argb(theme.text), italic: theme.italicBody },
    fill: { type: 'pattern', pattern: 'solid', fgColor: argb(fill) },
    border: borders(theme),
    alignment: { vertical: 'top', wrapText: false },
  })
  const titleFill: ExcelJS.Fill =
    theme.headerStyle === 'gradient'
      ? {
          type: 'gradient',
          gradient: 'angle',
          degree: 0,
          stops: [
            { position: 0, color: argb(theme.primary) },
            { position: 1, color: argb(theme.secondary) },
          ],
        }
      : { type: 'pattern', pattern: 'solid', fgColor: argb(theme.primary) }
  const titleBorder = borders(theme, true)
  return {
    rowHeight,
    even: body(theme.table.rowBg),
    odd: body(theme.table.alternateRowBg),
    header: {
      font: { name: theme.font, size: theme.bodySize, bold: true, color: argb(theme.table.headerText) },
      fill: { type: 'pattern', pattern: 'solid', fgColor: argb(theme.table.headerBg) },
      border: borders(theme, true),
      alignment: { vertical: 'middle' },
    } satisfies Style,
    heading: {
      font: { name: theme.font, size: theme.headerSize * 0.8, bold: true, color: argb(theme.secondary) },
      fill: { type: 'pattern', pattern: 'solid', fgColor: argb(theme.background) },
    } satisfies Style,
    title: {
      font: { name: theme.font, size: theme.headerSize, bold: theme.boldTitle, color: argb(theme.onPrimary) },
      fill: titleFill,
      alignment: { vertical: 'middle', horizontal: theme.headerStyle === 'banner' ? 'center' : 'left', indent: 1 },
      border:
        theme.headerStyle === 'banner'
          ? { ...titleBorder, bottom: { style: 'thick', color: argb(theme.accent) } }
          : titleBorder,
    } satisfies Style,
  }
}

/** How many UTF-16 units of `text` fit in `limit` without cutting a surrogate pair (an emoji) in half. */
function unitsUpTo(text: string, limit: number): number {
  const code = text.charCodeAt(limit - 1)
  return code >= 0xd800 && code <= 0xdbff ? limit - 1 : limit
}

/** Excel's rules for sheet names: 31 characters, none of []:*?/\, unique ignoring case. */
function sheetNames(sheets: readonly SheetData[]): string[] {
  const used = new Set<string>()
  return sheets.map((sheet, index) => {
    const cleaned = sheet.name
      .replace(/[[\]:*?/\\]/g, ' ')
      .replace(/^'+|'+$/g, '')
      .trim()
    const base = cleaned.slice(0, unitsUpTo(cleaned, 31)) || `Sheet${index + 1}`
    let name = base
    for (let suffix = 2; used.has(name.toLowerCase()); suffix++)
      name = `${base.slice(0, unitsUpTo(base, 31 - String(suffix).length - 1))} ${suffix}`
    used.add(name.toLowerCase())
    return name
  })
}

function columnWidths(sheet: SheetData, columns: number, minTotal: number): number[] {
  if (sheet.columnWidths) return Array.from({ length: columns }, (_, index) => sheet.columnWidths?.[index] ?? 12)
  const widths = Array.from({ length: columns }, (_, index) => String(sheet.headers?.[index] ?? '').length + 2)
  // The first rows decide; measuring all 100,000 would cost a full pass for little gain.
  for (const row of sheet.rows.slice(0, 200)) {
    row.forEach((value, index) => {
      widths[index] = Math.max(widths[index] ?? 0, Math.min(60, String(value ?? '').length + 2))
    })
  }
  const clamped = widths.map((width) => Math.max(8, Math.min(60, width)))
  // The merged title row clips at the sheet's last column: widen the columns until the title fits.
  const total = clamped.reduce((sum, width) => sum + width, 0)
  return total >= minTotal ? clamped : clamped.map((width) => Math.min(80, Math.ceil((width * minTotal) / total)))
}

/**
 * exceljs gives every new row its own empty style object, and on commit looks a row's style up by
 * object identity (a WeakMap); a fresh object misses, so each of 100,000 rows would render its style
 * to XML again just to find the default style. One shared empty object resolves once. Rows carry no
 * style of their own here (every cell has one), so nothing ever writes to it.
 */
const noRowStyle: Partial<ExcelJS.Style> = {}

export async function renderExcel(rawTitle: string, rawSheets: SheetData[], theme: Theme): Promise<Uint8Array> {
  // All user text enters here (title, sheet names, headers, and the cells row by row as they are
  // written): nothing XML 1.0 cannot hold may reach exceljs. A clean row is written as it is.
  const title = xmlText(rawTitle)
  const sheets = rawSheets.map((sheet) => ({
    ...sheet,
    name: xmlText(sheet.name),
    ...(sheet.headers ? { headers: xmlRow(sheet.headers) as Cell[] } : {}),
  }))
  const chunks: Uint8Array[] = []
  const sink = new PassThrough()
  sink.on('data', (chunk: Uint8Array) => chunks.push(chunk))
  const done = new Promise<void>((resolve, reject) => {
    sink.on('end', resolve)
    sink.on('error', reject)
  })
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: sink, useStyles: true, useSharedStrings: false })
  workbook.creator = 'toolport'
  workbook.title = title
  const style = styles(theme)
  const names = sheetNames(sheets)
  const inches = (points: number) => points / 72
  for (const [index, sheet] of sheets.entries()) {
    const columns = Math.max(1, sheet.headers?.length ?? 0, ...sheet.rows.slice(0, 10_000).map((row) => row.length))
    const worksheet = workbook.addWorksheet(names[index], {
      properties: { tabColor: argb(theme.accent), defaultRowHeight: style.rowHeight },
      views: [{ state: 'frozen', ySplit: sheet.headers ? 2 : 1 }],
      pageSetup: {
        orientation: columns > 6 ? 'landscape' : 'portrait',
        margins: {
          top: inches(theme.margin.top),
          bottom: inches(theme.margin.bottom),
          left: inches(theme.margin.left),
          right: inches(theme.margin.right),
          header: inches(theme.padding.header),
          footer: inches(theme.padding.footer),
        },
      },
      headerFooter: {
        oddHeader: `&L&"${theme.font},Bold"&${theme.footerSize}&K${theme.secondary}${title.replaceAll('&', '&&')}`,
        oddFooter: `&C&"${theme.font},Regular"&${theme.footerSize}&K${theme.secondary}Page &P of &N`,
      },
    })
    const titleText = names[index] === title.slice(0, unitsUpTo(title, 31)) ? title : `${title} — ${names[index]}`
    const titleWidth = (titleText.length * theme.headerSize) / 10 + 4
    worksheet.columns = columnWidths(sheet, columns, titleWidth).map((width) => ({ width }))
    const titleRow = worksheet.addRow([titleText])
    titleRow.height = theme.headerSize * 1.6 + theme.padding.header / 2
    for (let column = 1; column <= columns; column++) titleRow.getCell(column).style = style.title
    if (columns > 1) worksheet.mergeCells(1, 1, 1, columns)
    titleRow.commit()
    if (sheet.headers) {
      const header = worksheet.addRow(sheet.headers)
      header.height = style.rowHeight + 4
      for (let column = 1; column <= columns; column++) header.getCell(column).style = style.header
      header.commit()
    }
    for (const [rowIndex, values] of sheet.rows.entries()) {
      // exceljs reads the values into cells and keeps no reference to the array, so no copy is needed.
      const row = worksheet.addRow(xmlRow(values) as ExcelJS.CellValue[])
      // Row.style exists (exceljs doc/row.js, read on commit) but is missing from the typings.
      Object.assign(row, { style: noRowStyle })
      const look = sheet.headingRows?.has(rowIndex) ? style.heading : rowIndex % 2 === 0 ? style.even : style.odd
      for (let column = 1; column <= columns; column++) row.getCell(column).style = look
      row.commit()
    }
    await worksheet.commit()
  }
  await workbook.commit()
  await done
  return Buffer.concat(chunks)
}
