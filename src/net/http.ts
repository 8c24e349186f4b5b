/**
 * The outbound HTTP client every tool that reaches the network uses (http_fetch, web_fetch,
 * web_search, screenshot navigation, openaiFileIdRefs downloads). Types only: the Node implementation
 * resolves each host once, refuses private and metadata addresses, and pins the connection to the
 * address it checked, on every redirect hop.
 */
export interface HttpRequest {
  url: string
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD'
  headers?: Record<string, string>
  body?: string | Uint8Array
  /** Whole-call deadline including redirects. Default 30 s. */
  timeoutMs?: number
  /** Bytes of body kept; the rest is not read. Default 1 MiB. */
  maxBytes?: number
  /** Redirects followed (each hop re-checked). Default 5, at most 5. */
  maxRedirects?: number
  /**
   * Names of headers that carry secrets (a source manifest's): like credentials, they never follow a
   * redirect to another origin.
   */
  secretHeaders?: readonly string[]
  signal?: AbortSignal
}

export interface HttpResponse {
  status: number
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>
  body: Uint8Array
  /** True when the body was longer than maxBytes. */
  truncated: boolean
  /** The URL that answered, after redirects. */
  finalUrl: string
  redirects: number
}

export interface HttpClient {
  /** Throws ToolError: permission_denied (refused target), connection (502), timeout (504), validation (bad URL). */
  request(request: HttpRequest): Promise<HttpResponse>
  /** The same target check without a request: for a browser that fetches on its own. */
  check(url: string): Promise<void>
  /**
   * The check, answering the address it allowed, so a connection made elsewhere (the browser's egress
   * proxy) goes to that address and DNS cannot move it. Only where the client resolves names itself.
   */
  resolve?(url: string): Promise<ResolvedTarget>
}

export interface ResolvedTarget {
  address: string
  family: 4 | 6
}
