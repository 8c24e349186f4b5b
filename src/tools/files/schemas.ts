import { z } from 'zod'

export const WorkspacePath = z
  .string()
  .min(1)
  .max(1024)
  .describe('File path relative to the workspace root, separated by "/", e.g. "src/index.ts".')

export const LineNumber = z.number().int().min(1).max(100_000_000)

export const EditOutput = z.object({
  path: z.string().describe('The normalized workspace path that was written.'),
  bytes_written: z.number().int().describe('Size of the file after the change, in bytes.'),
})
