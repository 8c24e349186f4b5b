import { createReadStream, createWriteStream } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import ExcelJS from 'exceljs'
import { type Entry, Parse } from 'unzipper'

/** What exceljs's WorkbookReader keeps and does per part, which parse() below drives. */
interface ReaderParts {
  sharedStrings?: unknown[]
  workbookRels?: unknown
  _getStream(input: unknown): Readable
  _parseRels(entry: Entry): Promise<void>
  _parseWorkbook(entry: Entry): Promise<void>
  _parseSharedStrings(entry: Entry): AsyncGenerator<unknown>
  _parseStyles(entry: Entry): Promise<void>
  _parseWorksheet(chunks: AsyncIterable<Buffer>, sheetNo: string): Generator<unknown>
  _parseHyperlinks(chunks: AsyncIterable<Buffer>, sheetNo: string): Generator<unknown>
}

const worksheetPart = /^xl\/worksheets\/sheet(\d+)\.xml$/
const hyperlinksPart = /^xl\/worksheets\/_rels\/sheet(\d+)\.xml\.rels$/

/**
 * exceljs 4.4.0's streaming WorkbookReader, walking the zip with the stream's own async iterator.
 * Its parse() walks it with exceljs's iterateStream helper, which loses entries depending on timing
 * (exceljs#683; the fix proposed upstream in exceljs#2915 does the same as this): a workbook whose
 * sharedStrings.xml comes after its sheets, as Excel writes them, then read every text cell as
 * `{ sharedString: n }` in about one run of three, and a sheet before workbook.xml was named "Sheet<n>".
 * Each part is still read by exceljs's own methods; a sheet that comes before the shared strings or
 * the workbook's relationships waits in a temporary file, as exceljs does it.
 */
export class WorkbookReader extends ExcelJS.stream.xlsx.WorkbookReader {
  override async *parse(input?: unknown): AsyncGenerator<unknown> {
    const reader = this as unknown as ReaderParts & { input: unknown }
    const zip = reader._getStream(input ?? reader.input).pipe(Parse({ forceStream: true }))
    const waiting: Array<{ sheetNo: string; path: string }> = []
    let folder: string | undefined
    try {
      for await (const entry of zip as AsyncIterable<Entry>) {
        const sheetNo = worksheetPart.exec(entry.path)?.[1]
        const linksOf = hyperlinksPart.exec(entry.path)?.[1]
        if (entry.path === 'xl/_rels/workbook.xml.rels') await reader._parseRels(entry)
        else if (entry.path === 'xl/workbook.xml') await reader._parseWorkbook(entry)
        else if (entry.path === 'xl/sharedStrings.xml') yield* reader._parseSharedStrings(entry)
        else if (entry.path === 'xl/styles.xml') await reader._parseStyles(entry)
        else if (sheetNo !== undefined && reader.sharedStrings && reader.workbookRels) {
          yield* reader._parseWorksheet(entry, sheetNo)
        } else if (sheetNo !== undefined) {
          folder ??= await mkdtemp(join(tmpdir(), 'toolport-xlsx-'))
          const path = join(folder, `sheet${sheetNo}.xml`)
          await pipeline(entry, createWriteStream(path))
          waiting.push({ sheetNo, path })
        } else if (linksOf !== undefined) yield* reader._parseHyperlinks(entry, linksOf)
        entry.autodrain()
      }
      for (const { sheetNo, path } of waiting) yield* reader._parseWorksheet(createReadStream(path), sheetNo)
    } finally {
      if (folder) await rm(folder, { recursive: true, force: true })
    }
  }
}
