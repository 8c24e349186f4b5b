import { excelAnalyze } from './excel/excel-analyze'
import { officeDocument } from './office/office-document'
import { pdfGeneration } from './pdf/pdf-generation'

export const documentTools = [pdfGeneration, officeDocument, excelAnalyze] as const
