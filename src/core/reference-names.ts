/**
 * Names the reference systems (../shared/reference) give to what toolport calls otherwise, for the
 * "did you mean" of a 404 or an unknown field: a client written for one of them learns toolport's name
 * from its first call, with or without a compat pack. Names closestName finds on its own (camelCase
 * for snake_case) are not listed.
 */
export const referenceToolNames: Readonly<Record<string, { name: string; reference: string; pack?: string }>> = {
  // 001, Bond's builtin toolbox.
  shell: { name: 'execute_command', reference: '001 (Bond)', pack: 'bond' },
  file_read: { name: 'read_file', reference: '001 (Bond)', pack: 'bond' },
  file_write: { name: 'write_file', reference: '001 (Bond)', pack: 'bond' },
  env: { name: 'get_env', reference: '001 (Bond)', pack: 'bond' },
  // 000, Boris: its documentation calls system_info as get_system_info().
  get_system_info: { name: 'system_info', reference: '000 (Boris)', pack: 'boris' },
}

/** Field names of the reference systems and the fields they mean here, in order of likelihood. */
export const referenceFieldNames: Readonly<Record<string, readonly string[]>> = {
  // 002's excel_analyze and FileRefs.
  filePath: ['path', 'output_path'],
  file_path: ['path', 'output_path'],
  file: ['path'],
  filename: ['path', 'output_path'],
  // 001's shell.
  cmd: ['command'],
  cwd: ['working_directory'],
  dir: ['path', 'working_directory'],
  directory: ['path', 'working_directory'],
  timeout: ['timeout_seconds'],
}

/** The field a reference spelling means among `known`, if any. */
export function referenceField(name: string, known: readonly string[]): string | undefined {
  // Own keys only: a field named "constructor" or "__proto__" is a caller's, not a table entry.
  if (!Object.hasOwn(referenceFieldNames, name)) return undefined
  return referenceFieldNames[name]?.find((candidate) => known.includes(candidate))
}

/** The tool a reference system's name means here, if it names one (own keys only, as above). */
export function referenceTool(name: string): (typeof referenceToolNames)[string] | undefined {
  return Object.hasOwn(referenceToolNames, name) ? referenceToolNames[name] : undefined
}
