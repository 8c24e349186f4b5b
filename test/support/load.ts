import autocannon from 'autocannon'

export interface LoadResult {
  requests: number
  errors: number
  timeouts: number
  status5xx: number
  status4xx: number
  /** The content each written path must hold afterwards. */
  written: Map<string, string>
}

/** Deterministic content per path, so a checksum pass after the run knows what must be there. */
export function loadContent(path: string): string {
  return `load test content of ${path}\n`.repeat(20)
}

/**
 * Mixed tool calls (write, read, list, edit-miss, validation error) from many connections with
 * autocannon. Writes always store the same content per path, so the final state is known whatever
 * the interleaving.
 */
export async function runMixedLoad(options: {
  url: string
  connections: number
  durationSeconds: number
  workspace?: string
  headers?: Record<string, string>
}): Promise<LoadResult> {
  const workspace = options.workspace ?? 'load'
  const paths = Array.from({ length: 50 }, (_, index) => `load/${index}.txt`)
  const written = new Map(paths.map((path) => [path, loadContent(path)]))
  const headers = { 'content-type': 'application/json', ...options.headers }
  const call = (tool: string, body: unknown) => ({
    method: 'POST' as const,
    path: `/v1/tools/${tool}?workspace=${workspace}`,
    headers,
    body: JSON.stringify(body),
  })
  const requests = paths.flatMap((path) => [
    call('write_file', { path, content: loadContent(path) }),
    call('read_file', { path }),
    call('list_files', { path: 'load' }),
    call('apply_edit', { path, old_text: 'not in the file', new_text: 'x' }),
    call('read_file', { path: '../escape' }),
  ])
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.durationSeconds,
    // Each connection walks the whole list in order, then starts over.
    requests,
  })
  const byStatus = result.statusCodeStats as unknown as Record<string, { count: number }>
  const count = (prefix: string) =>
    Object.entries(byStatus)
      .filter(([status]) => status.startsWith(prefix))
      .reduce((sum, [, stats]) => sum + stats.count, 0)
  return {
    requests: result.requests.total,
    errors: result.errors,
    timeouts: result.timeouts,
    status5xx: count('5'),
    status4xx: count('4'),
    written,
  }
}
