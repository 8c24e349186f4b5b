import type { Workspace } from '../workspace/workspace'
import type { LinkSigner } from './signing'

/** Issues download URLs for workspace files: presigned S3 GETs where storage can, signed tokens otherwise. */
export interface FileLinks {
  issue(file: LinkTarget): Promise<IssuedLink>
}

export interface LinkTarget {
  workspace: Workspace
  path: string
  name: string
  mimeType: string
  /** Origin of the request that made the file; links point there unless a public URL is configured. */
  origin?: string | undefined
}

export interface IssuedLink {
  url: string
  expiresAt: Date
}

export interface FileLinkOptions {
  signer: LinkSigner
  ttlSeconds: number
  /** TOOLPORT_PUBLIC_URL when set: it wins over the request origin (proxies rewrite Host). */
  publicUrl: string | undefined
  /** Used when neither a public URL nor a request origin is known. */
  fallbackUrl: string
  now?: () => number
}

export function createFileLinks(options: FileLinkOptions): FileLinks {
  const now = options.now ?? Date.now
  return {
    async issue({ workspace, path, name, mimeType, origin }) {
      const expiresAtSeconds = Math.floor(now() / 1000) + options.ttlSeconds
      const expiresAt = new Date(expiresAtSeconds * 1000)
      const { storage } = workspace
      if (storage.presignGet) {
        const url = await storage.presignGet(workspace.keyOf(path), {
          expiresInSeconds: options.ttlSeconds,
          filename: name,
          contentType: mimeType,
        })
        return { url, expiresAt }
      }
      const token = await options.signer.sign({
        tenant: workspace.tenant,
        workspace: workspace.id,
        path,
        expiresAt: expiresAtSeconds,
      })
      const base = (options.publicUrl ?? origin ?? options.fallbackUrl).replace(/\/+$/, '')
      return { url: `${base}/v1/files/${token}`, expiresAt }
    },
  }
}
