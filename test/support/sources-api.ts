import type { TestServer } from './server'

/** PUT /v1/sources/{id} with an admin key: the status and the source status (or problem) it answers. */
export async function putSource(server: TestServer, key: string, manifest: Record<string, unknown>) {
  const response = await fetch(`${server.url}/v1/sources/${manifest.id}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(manifest),
  })
  // biome-ignore lint/suspicious/noExplicitAny: tests inspect arbitrary JSON
  return { status: response.status, body: (await response.json()) as any }
}
