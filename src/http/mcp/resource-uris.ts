/** The workspace's files as MCP resources, one URI each: `toolport://workspace/{workspace}/{path}`. */
export const workspaceScheme = 'toolport://workspace/'

/** The resource template clients fill in to read any workspace file (RFC 6570). */
export const workspaceTemplate = `${workspaceScheme}{workspace}/{+path}`

export function workspaceUri(workspace: string, path: string): string {
  return `${workspaceScheme}${workspace}/${path.split('/').map(encodeURIComponent).join('/')}`
}
