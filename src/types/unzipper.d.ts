// The part of unzipper (exceljs's zip reader, pinned with it) that excel/workbook-reader.ts uses.
declare module 'unzipper' {
  import type { Duplex, Readable } from 'node:stream'

  export interface Entry extends Readable {
    path: string
    autodrain(): unknown
  }

  export function Parse(options?: { forceStream?: boolean }): Duplex & AsyncIterable<Entry>
}
