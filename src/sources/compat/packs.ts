/**
 * Compat packs: alias sources that let a client written for one of the reference systems call
 * toolport unchanged. Each is named after its system (docs/sources.md#compat-packs); what still
 * differs (result shapes, absolute paths) is listed there too.
 */
export const compatPacks = {
  // 000, Boris: toolport's own tool names, with camelCase fields (outputPath, contentType, documentType,
  // workingDirectory, customization.primaryColor …).
  boris: {
    id: 'compat-boris',
    kind: 'alias',
    description: 'Boris field names (camelCase) on toolport tools, and get_system_info.',
    tools: [
      ...['pdf_generation', 'office_document', 'execute_command'].map((name) => ({
        name,
        tool: name,
        accept_camel_case: true,
      })),
      // The name Boris's own documentation calls system_info by: get_system_info().
      { name: 'get_system_info', tool: 'system_info', title: 'System information' },
    ],
  },
  // 001, Bond's builtin toolbox: its tool names; the fields are already toolport's.
  bond: {
    id: 'compat-bond',
    kind: 'alias',
    description: "Bond's builtin tool names: shell, file_read, file_write, env.",
    tools: [
      { name: 'shell', tool: 'execute_command', title: 'Shell' },
      { name: 'file_read', tool: 'read_file', title: 'Read file' },
      { name: 'file_write', tool: 'write_file', title: 'Write file' },
      { name: 'env', tool: 'get_env', title: 'Read environment variable' },
    ],
  },
  // 002, FengYu's Excel plugin: filePath for excel_analyze's path.
  fengyu: {
    id: 'compat-fengyu',
    kind: 'alias',
    description: "FengYu's Excel plugin field names.",
    tools: [{ name: 'excel_analyze', tool: 'excel_analyze', rename: { filePath: 'path' } }],
  },
} as const

export type CompatPackName = keyof typeof compatPacks
export const compatPackNames = Object.keys(compatPacks) as [CompatPackName, ...CompatPackName[]]
