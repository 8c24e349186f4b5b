import { excelAnalyze } from './excel'
import { officeDocument } from './office'
import { pdfGeneration } from './pdf'

export const documentTools = [pdfGeneration, officeDocument, excelAnalyze] as const
