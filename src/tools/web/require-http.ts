import { ToolError } from '../../core/errors'

/** The outbound client, or the 503 of a deployment that has none. */
export function requireHttp<T>(http: T | undefined): T {
  if (!http) {
    throw new ToolError('unavailable', 'Outbound HTTP is not available on this deployment.', {
      notOffered: true,
      hint: 'This server cannot reach the network; use the workspace tools instead.',
    })
  }
  return http
}
