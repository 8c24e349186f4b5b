import type { Hono } from 'hono'
import { ToolError } from '../../core/errors'
import { baseNameOf, contentDisposition, mimeTypeOf } from '../../core/mime'
import { normalizeWorkspacePath } from '../../core/paths'
import type { LinkSigner } from '../../downloads/signing'
import type { ObjectStore } from '../../storage/store'
import { workspacePrefix } from '../../workspace/workspace'
import type { AppEnv } from '../env'

const invalidLink = () =>
  new ToolError('not_found', 'This download link is not valid.', {
    hint: 'Use the url exactly as a tool returned it; call the tool again for a new link.',
  })

/**
 * GET /v1/files/{token}: the download side of the file hand-off for fs and memory storage. Public on
 * purpose (the signed token is the credential), so a chat client can open the link without a key.
 */
export function registerFileRoutes(app: Hono<AppEnv>, storage: ObjectStore, signer: LinkSigner): void {
  app.get('/v1/files/:token', async (context) => {
    const verified = await signer.verify(context.req.param('token'))
    if (!verified.ok) {
      if (verified.reason === 'expired') {
        throw new ToolError('permission_denied', 'This download link has expired.', {
          hint: 'Call the tool that made the file again (or read it with read_file) to get a fresh link.',
        })
      }
      throw invalidLink()
    }
    const { tenant, workspace, path } = verified.claims
    let key: string
    try {
      if (normalizeWorkspacePath(path) !== path) throw invalidLink()
      key = workspacePrefix(tenant, workspace) + path
    } catch {
      throw invalidLink()
    }
    const object = await storage.getStream(key)
    if (!object) {
      throw new ToolError('not_found', 'The file behind this link no longer exists.', {
        hint: 'The file was deleted or replaced; make it again to get a new link.',
      })
    }
    const name = baseNameOf(path)
    return new Response(object.body, {
      status: 200,
      headers: {
        'Content-Type': mimeTypeOf(name),
        'Content-Length': String(object.size),
        'Content-Disposition': contentDisposition(name),
        'Cache-Control': 'private, no-store',
        ETag: `"${object.etag}"`,
      },
    })
  })
}
