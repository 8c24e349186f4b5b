import { z } from 'zod'

/** The file hand-off shapes every tool that makes or reads a file shares. */
export const GeneratedFile = z.object({
  path: z.string().describe('Workspace path where the file was stored.'),
  name: z.string().describe('File name for saving the download.'),
  mime_type: z.string(),
  size: z.number().int().describe('Bytes.'),
  sha256: z.string().describe('Hex SHA-256 of the content.'),
  url: z.string().describe('Download link; no credentials needed until expires_at.'),
  expires_at: z.string().describe('ISO 8601 time when url stops working; call the tool again for a fresh one.'),
})
export type GeneratedFile = z.infer<typeof GeneratedFile>

export const FileOutputFields = {
  files: z.array(GeneratedFile).describe('The files this call made.'),
  openaiFileResponse: z.array(z.string()).describe('The download URLs, for ChatGPT custom GPT actions.'),
}

export const OutputPath = z
  .string()
  .min(1)
  .max(1024)
  .optional()
  .describe('Workspace path for the new file, e.g. "reports/q3.pdf". Default: a generated name under outputs/.')

export const OpenAiFileRef = z.object({
  name: z.string().max(1024).default('file'),
  id: z.string().max(1024).default(''),
  mime_type: z.string().max(256).nullish(),
  download_link: z.url({ protocol: /^https?$/ }).describe('URL the file is downloaded from.'),
})

export const FileInputFields = {
  path: z.string().min(1).max(1024).optional().describe('Workspace path of the file to read.'),
  openaiFileIdRefs: z
    .array(OpenAiFileRef)
    .max(10)
    .optional()
    .describe('Files attached in ChatGPT (custom GPT actions); the first one is read. Use instead of path.'),
}

/** A dry run's account of a file the call would make. */
export const OutputPreviewSchema = z.object({
  path: z.string().describe('Workspace path the file would be stored at.'),
  generated: z.boolean().describe('True when no output_path was given: the call picks a fresh name like this one.'),
  overwrites: z.boolean().describe('True when a file is there already and would be replaced.'),
})
