import { ToolError } from '../../core/errors'
import type { HttpClient } from '../../net/http'
import type { SourceManifest } from '../manifest'

/**
 * A tenant's source may only name upstreams the outbound address rules allow (public addresses, or
 * hosts the operator listed in TOOLPORT_FETCH_ALLOW_HOSTS): checked when it is registered, so the
 * refusal names the field, and again by the outbound client on every request.
 */
export async function checkOutboundUrls(manifest: SourceManifest, http: HttpClient): Promise<void> {
  const urls: Array<[string, string | undefined]> = [
    ['url', 'url' in manifest ? manifest.url : undefined],
    ['base_url', 'base_url' in manifest ? manifest.base_url : undefined],
  ]
  for (const [field, url] of urls) {
    if (url === undefined) continue
    try {
      await http.check(url)
    } catch (error) {
      if (!(error instanceof ToolError)) throw error
      // An upstream that does not resolve or answer now is the source's state (error), not a refusal.
      if (error.code !== 'validation' && error.code !== 'permission_denied') continue
      throw new ToolError(
        error.code === 'validation' ? 'validation' : 'permission_denied',
        `${field}: ${error.message}`,
        {
          hint: `A tenant source may name only public hosts (or hosts the operator allows in TOOLPORT_FETCH_ALLOW_HOSTS); change ${field}.`,
          details: { field },
        },
      )
    }
  }
}
